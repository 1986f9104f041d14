package kvstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
	"github.com/rshub/rshub/wire"
)

// shardPrefix is the start of the subshards keys of shard n.
func shardPrefix(n int) string { return strconv.Itoa(n) + "." }

// indexShard records the subscription id (key token k) in its shard and
// bumps the shard's version.
func indexShard(ctx context.Context, b *buckets, id, k string) error {
	n := hub.ShardOf(id)
	if err := ensureKey(ctx, b.subShards, shardPrefix(n)+k, []byte(id)); err != nil {
		return err
	}
	return bumpShard(ctx, b, n)
}

// unindexShard removes the subscription id (key token k) from its shard
// and bumps the shard's version.
func unindexShard(ctx context.Context, b *buckets, id, k string) error {
	n := hub.ShardOf(id)
	if err := deleteKey(ctx, b.subShards, shardPrefix(n)+k); err != nil {
		return err
	}
	return bumpShard(ctx, b, n)
}

// bumpShard writes the version key of shard n: its new revision is the
// shard's new version.
func bumpShard(ctx context.Context, b *buckets, n int) error {
	_, err := b.shardVer.Put(ctx, strconv.Itoa(n), nil)
	return err
}

// SubscriptionsInShard lists the subscriptions of shard, ordered by ID.
func (s *Store) SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error) {
	if !hub.ValidShard(shard) {
		return nil, fmt.Errorf("kvstore: subscriptions of shard %d: no such shard", shard)
	}
	var out []hub.Subscription
	err := s.do(ctx, func(ctx context.Context, b *buckets) (err error) {
		out, err = indexed(ctx, b, b.subShards, shardPrefix(shard)+"*", func(sub hub.Subscription) bool { return hub.ShardOf(sub.ID) == shard })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: subscriptions of shard %d: %w", shard, err)
	}
	slices.SortFunc(out, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// SubscriptionsInShards lists the subscriptions of the given shards by
// shard, each ordered by ID, in one pass over the shard index (keys only)
// and one over the subscriptions, pulled a page at a time (scanPaged),
// whatever the number of shards: listing
// shard by shard reads the index once per shard, and each subscription by
// itself. A subscription written during the pass over the subscriptions
// moves past it; the index, whose entries never move, names it, and it is
// read by itself.
func (s *Store) SubscriptionsInShards(ctx context.Context, shards []int) (map[int][]hub.Subscription, error) {
	want := map[string]int{} // key prefix of a shard in the index → shard
	for _, n := range shards {
		if !hub.ValidShard(n) {
			return nil, fmt.Errorf("kvstore: subscriptions of shard %d: no such shard", n)
		}
		want[shardPrefix(n)] = n
	}
	out := make(map[int][]hub.Subscription, len(want))
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		clear(out)
		indexed := map[string]int{} // key token of a subscription → its shard
		err := scanPaged(ctx, b.subShards, b.subShardsStream, true, func(key string, _ []byte, _ uint64) error {
			pre, k, ok := strings.Cut(key, ".")
			if n, mine := want[pre+"."]; ok && mine {
				indexed[k] = n
			}
			return nil
		})
		if err != nil {
			return err
		}
		keep := func(n int, sub hub.Subscription) {
			if hub.ShardOf(sub.ID) == n {
				out[n] = append(out[n], sub)
			}
		}
		err = scanPaged(ctx, b.subs, b.subsStream, false, func(key string, val []byte, _ uint64) error {
			n, ok := indexed[key]
			if !ok {
				return nil
			}
			delete(indexed, key)
			var sub hub.Subscription
			if err := json.Unmarshal(val, &sub); err != nil {
				return fmt.Errorf("decode %s: %w", key, err)
			}
			keep(n, sub)
			return nil
		})
		if err != nil {
			return err
		}
		for k, n := range indexed { // written during the pass, deleted, or not stored yet
			var sub hub.Subscription
			_, err := getJSON(ctx, b.subs, k, &sub)
			if errors.Is(err, hub.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			keep(n, sub)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: subscriptions of %d shards: %w", len(want), err)
	}
	for _, subs := range out {
		slices.SortFunc(subs, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// ShardVersions returns the revision of each shard's version key.
func (s *Store) ShardVersions(ctx context.Context) ([]uint64, error) {
	out := make([]uint64, hub.Shards)
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		es, err := scan(ctx, b.shardVer, "*", true)
		if err != nil {
			return err
		}
		for _, e := range es {
			if n, err := strconv.Atoi(e.Key()); err == nil && hub.ValidShard(n) {
				out[n] = e.Revision()
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: shard versions: %w", err)
	}
	return out, nil
}

// membersKey holds every member and its heartbeat expiry.
const membersKey = "hubs"

// Heartbeat records owner as live for ttl and returns the live members.
// Expiry compares wall clocks, as for leases.
func (s *Store) Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	if _, err := key("owner", owner); err != nil {
		return nil, fmt.Errorf("kvstore: heartbeat: %w", err)
	}
	var live []string
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		for attempt := range maxCASAttempts {
			m := map[string]time.Time{}
			rev, err := getJSON(ctx, b.members, membersKey, &m)
			if err != nil && !errors.Is(err, hub.ErrNotFound) {
				return err
			}
			now := time.Now()
			maps.DeleteFunc(m, func(_ string, exp time.Time) bool { return !now.Before(exp) })
			if ttl > 0 {
				m[owner] = now.Add(ttl)
			} else {
				delete(m, owner)
			}
			conflict, err := casJSON(ctx, b, b.members, membersKey, rev, m)
			if err != nil {
				return err
			}
			if !conflict {
				live = slices.Sorted(maps.Keys(m))
				return nil
			}
			if err := backoff.Wait(ctx, attempt); err != nil {
				return err
			}
		}
		return fmt.Errorf("still contended after %d attempts", maxCASAttempts)
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: heartbeat %q: %w", wire.Clip(owner), err)
	}
	return live, nil
}

// indexedKey marks, in shardver, that the shard index has been built.
const indexedKey = "indexed"

// indexShards builds the shard index of the subscriptions stored by a
// version without one, once. It is idempotent; an ID indexed after its
// subscription was deleted is skipped by readers.
func (s *Store) indexShards(ctx context.Context, b *buckets) error {
	if _, err := b.shardVer.Get(ctx, indexedKey); err == nil {
		return nil
	}
	vals, err := entries(ctx, b.subs, ">")
	if err != nil {
		return fmt.Errorf("index subscriptions by shard: %w", err)
	}
	for _, v := range vals {
		var sub hub.Subscription
		if err := json.Unmarshal(v, &sub); err != nil || sub.ID == "" {
			continue
		}
		if err := indexShard(ctx, b, sub.ID, digest(sub.ID)); err != nil {
			return fmt.Errorf("index subscription %q by shard: %w", wire.Clip(sub.ID), err)
		}
	}
	if len(vals) > 0 {
		s.log.Info("kvstore: indexed subscriptions by shard", "subscriptions", len(vals))
	}
	_, err = b.shardVer.Put(ctx, indexedKey, nil)
	return err
}
