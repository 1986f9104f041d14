// Package redisstore keeps the hub's state in Redis, so several hub
// processes share subscriptions, cursors, dead letters and leases. It
// implements hub.Store.
//
// Keys, all under the configured prefix (default "rshub"):
//
//	<p>:channels             hash   topic -> hub.Channel (JSON)
//	<p>:chstate:<topic>      string hub.ChannelState (JSON)
//	<p>:subs                 hash   subscription ID -> hub.Subscription
//	<p>:subtopic:<topic>     set    subscription IDs of topic
//	<p>:cursors              hash   subscription ID -> hub.Cursor
//	<p>:dead:<subID>         zset   dead letter ID, scored by Seq
//	<p>:deadv:<subID>        hash   dead letter ID -> hub.DeadLetter
//	<p>:lease:<key>          string owner, with the lease's expiry as TTL
//
// Channel states change optimistically under WATCH/MULTI; leases expire on
// the Redis server's clock, so hubs need not agree on time. Multi-key
// transactions assume one Redis (or a primary with replicas), not Redis
// Cluster. Dead letters are ordered by a float64 score, exact for
// sequences below 2^53.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
)

// DefaultPrefix starts every key.
const DefaultPrefix = "rshub"

// maxTxAttempts bounds the retries of an optimistic transaction.
const maxTxAttempts = 1000

// Config configures the store.
type Config struct {
	Prefix string // key prefix; default "rshub"
}

// Store is a hub.Store on Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
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
	s := &Store{rdb: redis.NewClient(opt), prefix: cfg.Prefix}
	if err := s.Ping(ctx); err != nil {
		_ = s.rdb.Close()
		return nil, fmt.Errorf("redisstore: open %s: %w", opt.Addr, err)
	}
	return s, nil
}

// Close closes the connection pool.
func (s *Store) Close() error {
	return s.rdb.Close()
}

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisstore: ping: %w", err)
	}
	return nil
}

func (s *Store) key(parts ...string) string {
	k := s.prefix
	for _, p := range parts {
		k += ":" + p
	}
	return k
}

// hgetJSON loads field of hash into v, mapping absence to hub.ErrNotFound.
func (s *Store) hgetJSON(ctx context.Context, hash, field string, v any) error {
	b, err := s.rdb.HGet(ctx, hash, field).Bytes()
	if errors.Is(err, redis.Nil) {
		return hub.ErrNotFound
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// decodeAll decodes JSON values, skipping missing ones (nil from HMGET).
func decodeAll[T any](vals []any) ([]T, error) {
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		str, ok := v.(string)
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
