// Package redisstore keeps the hub's state in Redis, so several hub
// processes share subscriptions, cursors, dead letters and leases. It
// implements hub.Store.
//
// Keys, all under the configured prefix (default "rshub"):
//
//	<p>:channels             hash   topic -> hub.Channel (JSON)
//	<p>:state:<D(topic)>     string hub.ChannelState (JSON)
//	<p>:subs                 hash   subscription ID -> hub.Subscription
//	<p>:topicsubs:<D(topic)> set    subscription IDs of topic
//	<p>:cursors              hash   subscription ID -> hub.Cursor
//	<p>:deadseq:<D(subID)>   zset   dead letter ID, scored by Seq
//	<p>:deadval:<D(subID)>   hash   dead letter ID -> hub.DeadLetter
//	<p>:claim:<D(key)>       string owner, with the lease's expiry as TTL
//	<p>:shardsubs:<n>        set    subscription IDs of shard n (hub.ShardOf)
//	<p>:shardver             hash   shard n -> counter of its subscription writes
//	<p>:shardindex           string set once the shard index is built
//	<p>:members              zset   hub owner names, scored by heartbeat expiry (ms)
//	<p>:chanver              string counter moved by every channel put and delete
//	<p>:follow               hash   topic -> follower status (package follow)
//	<p>:attempts:<D(subID)>  list   hub.Attempt, newest first; expires hub.AttemptLogTTL after its last write
//
// D is the unpadded base64url SHA-256 digest of the string, 43 characters:
// a string a client chose never becomes part of a key name, only of hash
// fields, set members and values, where it is data. Those strings must be
// non-empty valid UTF-8 (JSON, which stores them, cannot carry anything
// else); other strings are refused with an error.
//
// Open migrates the keys of earlier versions, which carried the raw string
// (<p>:chstate:<topic>, <p>:subtopic:<topic>, <p>:lease:<key>,
// <p>:dead:<subID>, <p>:deadv:<subID>), to these names, merging with what
// a current hub wrote meanwhile; it is idempotent. Channel states change
// optimistically under WATCH/MULTI; leases expire on the Redis server's
// clock, so hubs need not agree on time. Multi-key transactions and scripts
// assume one Redis (or a primary with replicas), not Redis Cluster. Dead
// letters are ordered by a float64 score, exact for sequences below 2^53.
package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	json "github.com/segmentio/encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/snapshot"
	"github.com/rshub/rshub/wire"
)

// DefaultPrefix starts every key.
const DefaultPrefix = "rshub"

// maxTxAttempts bounds the retries of an optimistic transaction.
const maxTxAttempts = 1000

// Config configures the store.
type Config struct {
	Prefix string       // key prefix; default "rshub"
	Logger *slog.Logger // migration events; default: none
}

// Store is a hub.Store on Redis.
type Store struct {
	rdb *redis.Client
	// leases is a small pool of its own for leases and heartbeats, so that
	// a renewal never queues behind a flood of cursor writes for a
	// connection of rdb's pool (a renewal that times out gives work up).
	leases *redis.Client
	prefix string
	log    *slog.Logger
	// channelList is the last channel listing and the chanver it was read
	// at (Channels).
	channelList snapshot.List[hub.Channel]
}

var _ hub.Store = (*Store)(nil)

// Open connects to the Redis at url (redis://host:port/db or rediss://)
// and checks that it answers.
func Open(ctx context.Context, url string, cfg Config) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore: open: %w", err)
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	lopt := *opt
	lopt.PoolSize, lopt.MinIdleConns = leasePool, 1
	s := &Store{rdb: redis.NewClient(opt), leases: redis.NewClient(&lopt), prefix: cfg.Prefix, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	err = s.Ping(ctx)
	if err == nil {
		err = s.migrate(ctx)
	}
	if err == nil {
		err = s.indexShards(ctx)
	}
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("redisstore: open %s: %w", opt.Addr, err)
	}
	return s, nil
}

// leasePool is the size of the connection pool for leases and heartbeats.
const leasePool = 4

// Close closes the connection pools.
func (s *Store) Close() error {
	return errors.Join(s.rdb.Close(), s.leases.Close())
}

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

// key returns the name of a key of kind, with the digest of a string when
// one is given.
func (s *Store) key(kind string, digests ...string) string {
	k := s.prefix + ":" + kind
	for _, d := range digests {
		k += ":" + d
	}
	return k
}

// digest is the key token of a string: unpadded base64url of its SHA-256.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// check refuses a client-supplied string the store cannot keep exactly.
func check(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s", what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	return nil
}

// dkey checks s and returns the name of the key of kind for it.
func (s *Store) dkey(kind, what, str string) (string, error) {
	if err := check(what, str); err != nil {
		return "", err
	}
	return s.key(kind, digest(str)), nil
}

// hget reads the value of field (checked as a what) of the hash named
// name, mapping absence to hub.ErrNotFound; label names the read in an
// error.
func hget[T any](ctx context.Context, s *Store, name, what, field, label string) (T, error) {
	var v T
	err := check(what, field)
	var b []byte
	if err == nil {
		b, err = s.rdb.HGet(ctx, s.key(name), field).Bytes()
	}
	if errors.Is(err, redis.Nil) {
		err = hub.ErrNotFound
	}
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("redisstore: %s %q: %w", label, wire.Clip(field), err)
	}
	return v, nil
}

// decodeAll decodes JSON values (strings), skipping missing ones (nil
// from HMGET).
func decodeAll[T, V any](vals []V) ([]T, error) {
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		str, ok := any(v).(string)
		if !ok {
			continue
		}
		var x T
		if err := json.Unmarshal([]byte(str), &x); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
