// Package kvstore keeps the hub's state in NATS JetStream key-value buckets,
// the embedded default next to the jslog log. It implements hub.Store.
//
// One bucket per kind of value, named <prefix>_<kind>:
//
//	channels   key enc(topic)            value hub.Channel (JSON)
//	chstate    key enc(topic)            value hub.ChannelState
//	subs       key subscription ID       value hub.Subscription
//	subtopics  key enc(topic).ID         empty; index of subs by topic
//	cursors    key subscription ID       value hub.Cursor
//	dead       key ID.enc(dead letter)   value hub.DeadLetter
//	leases     key enc(lease key)        value owner and expiry
//
// enc is unpadded base64url, so any topic URI is a valid key. Keys are
// NATS subjects: a topic must stay under about 2,900 bytes to fit the
// server's 4 KiB control line. Channel states and leases change by
// compare-and-set on the key's revision. Lease expiry compares wall clocks,
// so hubs sharing a bucket need synchronised clocks (NTP).
package kvstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

// DefaultPrefix starts every bucket name.
const DefaultPrefix = "rshub"

// maxCASAttempts bounds the retries of a compare-and-set that keeps losing.
const maxCASAttempts = 1000

// Config configures the buckets. Open creates them or updates them to match.
type Config struct {
	Replicas int    // default 1 (3 on a cluster)
	Prefix   string // bucket name prefix; default "rshub"
}

// Store is a hub.Store on JetStream key-value buckets.
type Store struct {
	channels, states, subs, subTopics, cursors, dead, leases jetstream.KeyValue
}

var _ hub.Store = (*Store)(nil)

// Open creates or updates the buckets on nc's JetStream.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Store, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("kvstore: open: %w", err)
	}
	s := &Store{}
	for _, b := range []struct {
		kind string
		kv   *jetstream.KeyValue
	}{
		{"channels", &s.channels}, {"chstate", &s.states}, {"subs", &s.subs},
		{"subtopics", &s.subTopics}, {"cursors", &s.cursors}, {"dead", &s.dead}, {"leases", &s.leases},
	} {
		name := cfg.Prefix + "_" + b.kind
		kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      name,
			Description: "rshub " + b.kind,
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    cfg.Replicas,
		})
		if err != nil {
			return nil, fmt.Errorf("kvstore: open bucket %s: %w", name, err)
		}
		*b.kv = kv
	}
	return s, nil
}

// Ping reports whether JetStream answers for the store's buckets.
func (s *Store) Ping(ctx context.Context) error {
	if _, err := s.channels.Status(ctx); err != nil {
		return fmt.Errorf("kvstore: ping: %w", err)
	}
	return nil
}

// enc turns an arbitrary string into a valid key token.
func enc(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty key")
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s)), nil
}

// getJSON loads key into v, mapping a missing key to hub.ErrNotFound.
func getJSON(ctx context.Context, kv jetstream.KeyValue, key string, v any) (uint64, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, hub.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(e.Value(), v); err != nil {
		return 0, fmt.Errorf("decode %s: %w", key, err)
	}
	return e.Revision(), nil
}

func putJSON(ctx context.Context, kv jetstream.KeyValue, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, key, b)
	return err
}

// casJSON stores v at key if its revision is still rev (0: key absent) and
// reports whether it lost the race.
func casJSON(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64, v any) (conflict bool, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	if rev == 0 {
		_, err = kv.Create(ctx, key, b)
	} else {
		_, err = kv.Update(ctx, key, b, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true, nil
	}
	return false, err
}

// entries returns the values of the keys matching filter.
func entries(ctx context.Context, kv jetstream.KeyValue, filter string) ([][]byte, error) {
	w, err := kv.Watch(ctx, filter, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	var out [][]byte
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("watcher closed")
			}
			if e == nil {
				return out, nil
			}
			out = append(out, e.Value())
		}
	}
}

// keys returns the keys matching filter.
func keys(ctx context.Context, kv jetstream.KeyValue, filter string) ([]string, error) {
	l, err := kv.ListKeysFiltered(ctx, filter)
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Stop() }()
	var out []string
	for k := range l.Keys() {
		out = append(out, k)
	}
	return out, nil
}

// deleteKey removes key; a missing key is not an error.
func deleteKey(ctx context.Context, kv jetstream.KeyValue, key string) error {
	err := kv.Delete(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	return err
}
