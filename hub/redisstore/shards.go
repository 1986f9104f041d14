package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// shardKey is the set of subscription IDs of shard n.
func (s *Store) shardKey(n int) string { return s.key("shardsubs", strconv.Itoa(n)) }

// indexShard adds the writes that keep the shard index of id to a
// transaction: the ID in (add) or out of its shard's set, and the shard's
// version bumped.
func (s *Store) indexShard(ctx context.Context, p redis.Pipeliner, id string, add bool) {
	n := hub.ShardOf(id)
	if add {
		p.SAdd(ctx, s.shardKey(n), id)
	} else {
		p.SRem(ctx, s.shardKey(n), id)
	}
	p.HIncrBy(ctx, s.key("shardver"), strconv.Itoa(n), 1)
}

// SubscriptionsInShard lists the subscriptions of shard, ordered by ID.
func (s *Store) SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error) {
	by, err := s.SubscriptionsInShards(ctx, []int{shard})
	if err != nil {
		return nil, err
	}
	return by[shard], nil
}

// SubscriptionsInShards lists the subscriptions of many shards, each
// ordered by ID, in one pipelined round trip for the shards' ID sets and
// one per statesChunk subscriptions, as a hub starting or taking over
// shards lists them all.
func (s *Store) SubscriptionsInShards(ctx context.Context, shards []int) (map[int][]hub.Subscription, error) {
	for _, n := range shards {
		if !hub.ValidShard(n) {
			return nil, fmt.Errorf("redisstore: subscriptions of shard %d: no such shard", n)
		}
	}
	sets := make([]*redis.StringSliceCmd, len(shards))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, n := range shards {
			sets[i] = p.SMembers(ctx, s.shardKey(n))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: subscriptions of %d shards: %w", len(shards), err)
	}
	var ids []string
	for _, c := range sets {
		ids = append(ids, c.Val()...)
	}
	out := make(map[int][]hub.Subscription, len(shards))
	for _, n := range shards {
		out[n] = []hub.Subscription{}
	}
	for start := 0; start < len(ids); start += statesChunk {
		vals, err := s.rdb.HMGet(ctx, s.key("subs"), ids[start:min(start+statesChunk, len(ids))]...).Result()
		var subs []hub.Subscription
		if err == nil {
			subs, err = decodeAll[hub.Subscription](vals) // a deleted one is nil: skipped
		}
		if err != nil {
			return nil, fmt.Errorf("redisstore: subscriptions of %d shards: %w", len(shards), err)
		}
		for _, sub := range subs {
			if n := hub.ShardOf(sub.ID); out[n] != nil {
				out[n] = append(out[n], sub)
			}
		}
	}
	for _, subs := range out {
		slices.SortFunc(subs, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// ShardVersions returns each shard's counter of subscription writes.
func (s *Store) ShardVersions(ctx context.Context) ([]uint64, error) {
	m, err := s.rdb.HGetAll(ctx, s.key("shardver")).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: shard versions: %w", err)
	}
	out := make([]uint64, hub.Shards)
	for k, v := range m {
		n, err1 := strconv.Atoi(k)
		c, err2 := strconv.ParseUint(v, 10, 64)
		if err1 == nil && err2 == nil && hub.ValidShard(n) {
			out[n] = c
		}
	}
	return out, nil
}

// heartbeatScript drops the members whose time is up, records ARGV[1]
// until ARGV[2] ms from now (or removes it when ARGV[2] is 0) and returns
// the members, all on the server's clock.
var heartbeatScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// Heartbeat records owner as live for ttl and returns the live members.
func (s *Store) Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	if err := check("owner", owner); err != nil {
		return nil, fmt.Errorf("redisstore: heartbeat: %w", err)
	}
	ms := int64(0)
	if ttl > 0 {
		ms = max(ttl.Milliseconds(), 1)
	}
	members, err := heartbeatScript.Run(ctx, s.leases, []string{s.key("members")}, owner, ms).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redisstore: heartbeat %q: %w", wire.Clip(owner), err)
	}
	slices.Sort(members)
	return members, nil
}

// indexShards builds the shard index of the subscriptions stored by a
// version without one, once: it is marked done by the key shardindex.
// Indexing is idempotent, so hubs opening the store at once do no harm; an
// ID indexed after its subscription was deleted is skipped by readers.
func (s *Store) indexShards(ctx context.Context) error {
	done, err := s.rdb.Exists(ctx, s.key("shardindex")).Result()
	if err != nil || done == 1 {
		return err
	}
	n := 0
	iter := s.rdb.HScan(ctx, s.key("subs"), 0, "", 512).Iterator()
	for iter.Next(ctx) {
		id := iter.Val()
		if !iter.Next(ctx) { // HSCAN yields field, value pairs
			break
		}
		if _, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			s.indexShard(ctx, p, id, true)
			return nil
		}); err != nil {
			return fmt.Errorf("index subscription %q by shard: %w", wire.Clip(id), err)
		}
		n++
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("index subscriptions by shard: %w", err)
	}
	if n > 0 {
		s.log.Info("redisstore: indexed subscriptions by shard", "subscriptions", n)
	}
	return s.rdb.Set(ctx, s.key("shardindex"), "1", 0).Err()
}
