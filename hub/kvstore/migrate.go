package kvstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// The earlier layout (before issue 11) keyed every bucket by a string
// itself: enc(topic) in channels and chstate, the raw subscription ID in
// subs and cursors, enc(topic).ID in subtopics (empty value), ID.enc(dead
// letter ID) in dead and enc(lease key) in leases, where enc is unpadded
// base64url. A 43-character old key looks like a digest, so an entry is
// told apart by its value: an entry of the current layout names the
// strings its key is the digest of.

// migration converts the entries of one bucket.
type migration struct {
	kind string
	kv   jetstream.KeyValue
	// current reports whether an entry is already in the current layout.
	current func(key string, val []byte) bool
	// convert returns the current key and value of an old entry.
	convert func(key string, val []byte) (string, []byte, error)
}

// migrate moves every entry of the earlier layout to its current key,
// reading each bucket a page at a time (scanPaged). It is idempotent: an entry already moved is recognised and left alone, and
// an entry whose current key exists already (written by a current hub) is
// dropped in its favour. A bucket's pass reads only what was stored since
// the last pass checked it (migratedMark): a hub of the earlier version
// still writing is caught at the next start, and a start does not read a
// million entries it read before.
func (s *Store) migrate(ctx context.Context, b *buckets) error {
	for _, m := range migrations(b) {
		if m.kind == "channels" && s.cfg.Origin != "" {
			continue // the origin's bucket: the origin migrates it
		}
		bs, err := openBucketStream(ctx, b.js, m.kv)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.kind, err)
		}
		mark, err := s.migratedMark(ctx, b, m.kind, &bs)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.kind, err)
		}
		moved := 0
		err = scanPaged(ctx, m.kv, bs, false, func(key string, val []byte, rev uint64) error {
			if m.current(key, val) {
				return nil
			}
			nk, nv, err := m.convert(key, val)
			if err != nil {
				s.log.Warn("kvstore: entry of an unknown layout left alone", "bucket", m.kind, "key", wire.Clip(key), "err", err)
				return nil
			}
			if err := move(ctx, m.kv, key, rev, nk, nv); err != nil {
				return fmt.Errorf("key %q: %w", wire.Clip(key), err)
			}
			moved++
			return nil
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.kind, err)
		}
		if moved > 0 {
			s.log.Info("kvstore: migrated keys to digests", "bucket", m.kind, "entries", moved)
		}
		if mark != nil {
			if _, err := b.shardVer.Put(ctx, migratedKey+m.kind, mark); err != nil {
				return fmt.Errorf("migrate %s: %w", m.kind, err)
			}
		}
	}
	return nil
}

// migratedKey, followed by a bucket's kind, is the key in the shardver
// bucket of the migrationMark of the last pass over that bucket.
const migratedKey = "migrated."

// migrationMark tells how far a migration pass checked a bucket's stream:
// every entry stored up to Seq, in the stream created at Created.
type migrationMark struct {
	Seq     uint64
	Created time.Time
}

// migratedMark sets bs to read only what the last pass over the bucket did
// not check, and returns the mark to store once this pass is done (nil
// without the bucket's stream). A stream created again since is read
// whole.
func (s *Store) migratedMark(ctx context.Context, b *buckets, kind string, bs *bucketStream) ([]byte, error) {
	if bs.stream == nil {
		return nil, nil
	}
	info := bs.stream.CachedInfo() // as of just now: openBucketStream
	now := migrationMark{Seq: info.State.LastSeq, Created: info.Created}
	var last migrationMark
	if _, err := getJSON(ctx, b.shardVer, migratedKey+kind, &last); err != nil && !errors.Is(err, hub.ErrNotFound) {
		return nil, err
	}
	if last.Seq > 0 && last.Seq <= now.Seq && last.Created.Equal(now.Created) {
		bs.from = last.Seq + 1
	}
	return json.Marshal(now)
}

// move creates nk unless it exists, then deletes the old entry key unless
// it changed since revision rev.
func move(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64, nk string, nv []byte) error {
	if _, err := kv.Create(ctx, nk, nv); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	err := kv.Delete(ctx, key, jetstream.LastRevision(rev))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return errors.New("changed while being migrated: a hub of an earlier version is still writing")
	}
	return err
}

func migrations(b *buckets) []migration {
	byTopic := func(key string, val []byte) bool {
		var v struct{ Topic string }
		return json.Unmarshal(val, &v) == nil && v.Topic != "" && digest(v.Topic) == key
	}
	fromEnc := func(key string, val []byte) (string, []byte, error) {
		var v struct{ Topic string }
		topic, err := dec(key)
		if err == nil {
			err = json.Unmarshal(val, &v)
		}
		if err == nil && v.Topic != topic {
			err = errors.New("the value names another topic")
		}
		return digest(topic), val, err
	}
	return []migration{
		{kind: "channels", kv: b.channels, current: byTopic, convert: fromEnc},
		{kind: "chstate", kv: b.states, current: byTopic, convert: fromEnc},
		{kind: "subs", kv: b.subs,
			current: func(key string, val []byte) bool {
				var v struct{ ID string }
				return json.Unmarshal(val, &v) == nil && v.ID != "" && digest(v.ID) == key
			},
			convert: func(key string, val []byte) (string, []byte, error) {
				var v struct{ ID string }
				err := json.Unmarshal(val, &v)
				if err == nil && v.ID != key {
					err = errors.New("the value names another subscription")
				}
				return digest(key), val, err
			},
		},
		{kind: "subtopics", kv: b.subTopics,
			current: func(key string, val []byte) bool {
				return len(val) > 0 && strings.HasSuffix(key, "."+digest(string(val)))
			},
			convert: func(key string, val []byte) (string, []byte, error) {
				t, id, ok := strings.Cut(key, ".")
				if !ok || id == "" || len(val) > 0 {
					return "", nil, errors.New("not enc(topic).ID with an empty value")
				}
				topic, err := dec(t)
				return digest(topic) + "." + digest(id), []byte(id), err
			},
		},
		{kind: "cursors", kv: b.cursors,
			current: func(key string, val []byte) bool {
				var v cursorValue
				return json.Unmarshal(val, &v) == nil && v.SubID != "" && digest(v.SubID) == key
			},
			convert: func(key string, val []byte) (string, []byte, error) {
				var v cursorValue
				if err := json.Unmarshal(val, &v); err != nil {
					return "", nil, err
				}
				if v.SubID != "" {
					return "", nil, errors.New("the value names another subscription")
				}
				v.SubID = key
				nv, err := json.Marshal(v)
				return digest(key), nv, err
			},
		},
		{kind: "dead", kv: b.dead,
			current: func(key string, val []byte) bool {
				var v hub.DeadLetter
				return json.Unmarshal(val, &v) == nil && v.ID != "" && v.SubID != "" &&
					digest(v.SubID)+"."+digest(v.ID) == key
			},
			convert: func(key string, val []byte) (string, []byte, error) {
				i := strings.LastIndexByte(key, '.')
				if i <= 0 {
					return "", nil, errors.New("not ID.enc(dead letter ID)")
				}
				var v hub.DeadLetter
				id, err := dec(key[i+1:])
				if err == nil {
					err = json.Unmarshal(val, &v)
				}
				if err == nil && (v.SubID != key[:i] || v.ID != id) {
					err = errors.New("the value names another dead letter")
				}
				return digest(key[:i]) + "." + digest(id), val, err
			},
		},
		{kind: "leases", kv: b.leases,
			current: func(key string, val []byte) bool {
				var v lease
				return json.Unmarshal(val, &v) == nil && v.Key != "" && digest(v.Key) == key
			},
			convert: func(key string, val []byte) (string, []byte, error) {
				var v lease
				lk, err := dec(key)
				if err == nil {
					err = json.Unmarshal(val, &v)
				}
				if err == nil && v.Key != "" {
					err = errors.New("the value names another lease")
				}
				if err != nil {
					return "", nil, err
				}
				v.Key = lk
				nv, err := json.Marshal(v)
				return digest(lk), nv, err
			},
		},
	}
}

// dec reverses the earlier layout's key encoding (unpadded base64url).
func dec(k string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(k)
	if err != nil {
		return "", fmt.Errorf("old key %q: %w", wire.Clip(k), err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("old key %q is empty", wire.Clip(k))
	}
	return string(b), nil
}
