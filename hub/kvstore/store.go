// Package kvstore keeps the hub's state in NATS JetStream key-value buckets,
// the embedded default next to the jslog log. It implements hub.Store.
//
// One bucket per kind of value, named <prefix>_<kind>:
//
//	channels   key D(topic)              value hub.Channel (JSON)
//	chstate    key D(topic)              value hub.ChannelState
//	subs       key D(ID)                 value hub.Subscription
//	subtopics  key D(topic).D(ID)        value the subscription ID; index of subs by topic
//	cursors    key D(ID)                 value hub.Cursor and the subscription ID
//	dead       key D(ID).D(dead letter)  value hub.DeadLetter
//	leases     key D(lease key)          value lease key, owner and expiry
//	subshards  key n.D(ID)               value the subscription ID; index of subs by shard n (hub.ShardOf)
//	shardver   key n                     written on every write to shard n: its revision is the shard's version
//	members    key hubs                  owner -> heartbeat expiry of the hubs sharing the buckets
//	follow     key D(topic)              value the topic and its follower status (package follow)
//	attempts   key D(ID)                 value a batch of the subscription's attempts, newest first; the key keeps its last attemptRevisions batches (attempts.go); entries expire after hub.AttemptLogTTL
//
// D is the unpadded base64url SHA-256 digest of the string, 43 characters:
// a string a client chose (topic URI, subscription ID, dead letter ID,
// lease key) never becomes part of a NATS subject, whatever its length or
// bytes; the original is kept in the value as data. Those strings must be
// non-empty valid UTF-8 (JSON, which stores them, cannot carry anything
// else); other strings are refused with an error.
//
// Open migrates buckets written by earlier versions, whose keys were the
// unpadded base64url of the string itself or the raw subscription ID, to
// this layout: it reads every entry once and moves those whose value does
// not name the strings their key is the digest of. That is idempotent, and
// an entry a current hub already wrote at the new key wins; hubs of
// earlier versions must not write to the buckets meanwhile. Channel states and leases change by compare-and-set
// on the key's revision. Lease expiry compares wall clocks, so hubs sharing
// a bucket need synchronised clocks (NTP).
//
// A Store opened with OpenConn on a natsconn.Conn follows its connection:
// when the connection is replaced, the bucket handles are rebuilt on the
// next operation; while it is down, operations fail at once with an error
// wrapping natsconn.ErrDisconnected.
package kvstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/snapshot"
	"github.com/rshub/rshub/wire"
)

// DefaultPrefix starts every bucket name.
const DefaultPrefix = "rshub"

// maxCASAttempts bounds the retries of a compare-and-set that keeps losing.
const maxCASAttempts = 1000

// Config configures the buckets. Open creates them or updates them to match.
type Config struct {
	Replicas int    // default 1 (3 on a cluster)
	Prefix   string // bucket name prefix; default "rshub"
	// Origin, the JetStream domain of an origin hub's NATS server reached
	// over a leaf node link, makes the channels the origin's: an edge
	// hub's store (origin.go).
	Origin string
	Logger *slog.Logger // migration and reconnection events; default: none
}

// Store is a hub.Store on JetStream key-value buckets.
type Store struct {
	conn *natsconn.Conn
	cfg  Config
	log  *slog.Logger

	rebuild sync.Mutex // one rebuild at a time
	mu      sync.Mutex
	b       *buckets
	// channelList is the last channel listing and the bucket version it
	// was read at (Channels).
	channelList snapshot.List[hub.Channel]
	// stateMemo remembers the channel states this store wrote, for
	// UpdateChannelState.
	stateMemo revMemo
}

// buckets are the handles of one connection generation.
type buckets struct {
	gen                                                      uint64
	nc                                                       *nats.Conn
	js                                                       jetstream.JetStream
	channels, states, subs, subTopics, cursors, dead, leases jetstream.KeyValue
	subShards, shardVer, members, follow, attempts           jetstream.KeyValue
	// deadStream is the dead bucket's stream and deadSubjects its subject
	// prefix, for counting a subscription's dead letters without a scan.
	deadStream   jetstream.Stream
	deadSubjects string
	// The streams of the buckets read whole (scanPaged).
	subsStream, subShardsStream, cursorsStream bucketStream
}

var _ hub.Store = (*Store)(nil)

// Open creates or updates the buckets on nc's JetStream and migrates an
// earlier layout (OpenConn, then Upgrade). The store uses nc as it is: see
// OpenConn for a store that outlives a closed connection.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Store, error) {
	c := natsconn.FromConn(nc) // follows nc until it is closed
	s, err := OpenConn(ctx, c, cfg)
	if err == nil {
		err = s.Upgrade(ctx)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// OpenConn waits, within ctx, for c to be connected and creates or updates
// the buckets: a few requests, whatever the store holds. The store follows
// c's current connection from then on. Call Upgrade before using it.
func OpenConn(ctx context.Context, c *natsconn.Conn, cfg Config) (*Store, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	s := &Store{conn: c, cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := c.Wait(ctx); err != nil {
		return nil, fmt.Errorf("kvstore: open: %w", err)
	}
	if err := s.do(ctx, func(context.Context, *buckets) error { return nil }); err != nil {
		return nil, fmt.Errorf("kvstore: open: %w", err)
	}
	return s, nil
}

// Upgrade migrates an earlier layout and builds the shard index once. It
// reads every entry of every bucket, so it takes time in proportion to
// what the store holds (about a second per 100,000 subscriptions): bound
// it by how long the whole start may take, not by how long one request
// may. It is idempotent.
func (s *Store) Upgrade(ctx context.Context) error {
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		if err := s.migrate(ctx, b); err != nil {
			return err
		}
		return s.indexShards(ctx, b)
	})
	if err != nil {
		return fmt.Errorf("kvstore: upgrade: %w", err)
	}
	return nil
}

// Ping reports whether JetStream answers for the store's buckets.
func (s *Store) Ping(ctx context.Context) error {
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		_, err := b.channels.Status(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("kvstore: ping: %w", err)
	}
	return nil
}

// do runs fn with the bucket handles of the current connection, rebuilding
// them first when the connection changed.
func (s *Store) do(ctx context.Context, fn func(context.Context, *buckets) error) error {
	return s.conn.Do(ctx, func(ctx context.Context, nc *nats.Conn, gen uint64) error {
		b, err := s.handles(ctx, nc, gen)
		if err != nil {
			return err
		}
		return fn(ctx, b)
	})
}

func (s *Store) handles(ctx context.Context, nc *nats.Conn, gen uint64) (*buckets, error) {
	s.mu.Lock()
	b := s.b
	s.mu.Unlock()
	if b != nil && b.gen == gen {
		return b, nil
	}
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	s.mu.Lock()
	b = s.b
	s.mu.Unlock()
	if b != nil && b.gen == gen {
		return b, nil
	}
	b, err := openBuckets(ctx, nc, gen, s.cfg)
	if err != nil {
		return nil, err
	}
	if s.b != nil {
		s.log.Info("kvstore: buckets reopened on a new connection", "generation", gen)
	}
	s.mu.Lock()
	s.b = b
	s.mu.Unlock()
	return b, nil
}

// openBuckets creates or updates every bucket on nc.
func openBuckets(ctx context.Context, nc *nats.Conn, gen uint64, cfg Config) (*buckets, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	b := &buckets{gen: gen, nc: nc, js: js}
	for _, k := range []struct {
		kind string
		kv   *jetstream.KeyValue
	}{
		{"channels", &b.channels}, {"chstate", &b.states}, {"subs", &b.subs},
		{"subtopics", &b.subTopics}, {"cursors", &b.cursors}, {"dead", &b.dead}, {"leases", &b.leases},
		{"subshards", &b.subShards}, {"shardver", &b.shardVer}, {"members", &b.members},
		{"follow", &b.follow}, {"attempts", &b.attempts},
	} {
		name := cfg.Prefix + "_" + k.kind
		if k.kind == "channels" && cfg.Origin != "" {
			kv, err := openOriginChannels(ctx, js, cfg)
			if err != nil {
				return nil, fmt.Errorf("the origin's channels (JetStream domain %s): %w", cfg.Origin, err)
			}
			*k.kv = kv
			continue
		}
		var ttl time.Duration
		history := uint8(1)
		if k.kind == "attempts" {
			ttl, history = hub.AttemptLogTTL, attemptRevisions
		}
		kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      name,
			Description: "rshub " + k.kind,
			History:     history,
			TTL:         ttl,
			Storage:     jetstream.FileStorage,
			Replicas:    cfg.Replicas,
		})
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", name, err)
		}
		*k.kv = kv
	}
	ds, err := openBucketStream(ctx, js, b.dead)
	if err != nil {
		return nil, err
	}
	b.deadStream, b.deadSubjects = ds.stream, ds.prefix
	for _, k := range []struct {
		kv jetstream.KeyValue
		bs *bucketStream
	}{{b.subs, &b.subsStream}, {b.subShards, &b.subShardsStream}, {b.cursors, &b.cursorsStream}} {
		if *k.bs, err = openBucketStream(ctx, js, k.kv); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// digest is the key token of a string: unpadded base64url of its SHA-256.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// key checks a client-supplied string and returns its key token.
func key(what, s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("empty %s", what)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%s is not valid UTF-8", what)
	}
	return digest(s), nil
}

// get reads the value of name's key (name checked as a what) from the
// bucket that bucket picks; label names the read in an error.
func get[T any](ctx context.Context, s *Store, bucket func(*buckets) jetstream.KeyValue, what, name, label string) (T, error) {
	var v T
	k, err := key(what, name)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			_, err := getJSON(ctx, bucket(b), k, &v)
			return err
		})
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("kvstore: %s %q: %w", label, wire.Clip(name), err)
	}
	return v, nil
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

// ensureKey writes val at key unless the key already holds a value. Index
// entries never change once written: writing one again would only move it
// to the stream's end, and a listing (a watch of the bucket) running at
// that moment would miss it, as an update during a watch's initial scan is
// neither among the initial values nor before their end.
func ensureKey(ctx context.Context, kv jetstream.KeyValue, key string, val []byte) error {
	_, err := kv.Create(ctx, key, val)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil
	}
	return err
}

// scan returns the entries whose keys match filter, without their values
// when metaOnly. It fails rather than return a partial list.
func scan(ctx context.Context, kv jetstream.KeyValue, filter string, metaOnly bool) ([]jetstream.KeyValueEntry, error) {
	var out []jetstream.KeyValueEntry
	err := scanEach(ctx, kv, filter, metaOnly, func(e jetstream.KeyValueEntry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanEach calls fn with each entry whose key matches filter, as it comes
// (without its value when metaOnly), and returns fn's first error.
func scanEach(ctx context.Context, kv jetstream.KeyValue, filter string, metaOnly bool, fn func(jetstream.KeyValueEntry) error) error {
	opts := []jetstream.WatchOpt{jetstream.IgnoreDeletes()}
	if metaOnly {
		opts = append(opts, jetstream.MetaOnly())
	}
	w, err := kv.Watch(ctx, filter, opts...)
	if err != nil {
		return err
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("watcher closed")
			}
			if e == nil {
				return nil
			}
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

// entries returns the values of the keys matching filter.
func entries(ctx context.Context, kv jetstream.KeyValue, filter string) ([][]byte, error) {
	es, err := scan(ctx, kv, filter, false)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(es))
	for _, e := range es {
		out = append(out, e.Value())
	}
	return out, nil
}

// keys returns the keys matching filter.
func keys(ctx context.Context, kv jetstream.KeyValue, filter string) ([]string, error) {
	es, err := scan(ctx, kv, filter, true)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Key())
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
