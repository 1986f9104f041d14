package hub

import (
	"context"
	"hash/fnv"
)

// Shards is the fixed number of partitions of the subscription space. Hubs
// sharing a store claim delivery work a shard at a time (delivery/shards.go),
// so the ownership work of a cluster grows with Shards and the number of
// hubs, never with the number of subscriptions. Every hub of a cluster must
// use the same value: it is a constant of the protocol between them.
const Shards = 64

// ShardOf returns the shard of the subscription with the given ID: the
// 32-bit FNV-1a hash of the ID modulo Shards.
func ShardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % Shards)
}

// ValidShard reports whether n names a shard.
func ValidShard(n int) bool { return n >= 0 && n < Shards }

// ShardReader lists the subscriptions of one shard; Store does.
type ShardReader interface {
	SubscriptionsInShard(ctx context.Context, shard int) ([]Subscription, error)
}

// ShardsLister is a store that lists many shards in one pass (kvstore).
type ShardsLister interface {
	SubscriptionsInShards(ctx context.Context, shards []int) (map[int][]Subscription, error)
}

// BatchListMin is how many shards are worth a ShardsLister's one pass.
const BatchListMin = 8

// ListShards calls fn with the subscriptions of each of shards, ordered by
// ID: from one pass over the store when st can and the shards are many (a
// hub starting lists every shard it holds), else a shard at a time. It
// stops at the first error.
func ListShards(ctx context.Context, st ShardReader, shards []int, fn func(n int, subs []Subscription) error) error {
	if bl, ok := st.(ShardsLister); ok && len(shards) >= BatchListMin {
		byShard, err := bl.SubscriptionsInShards(ctx, shards)
		if err != nil {
			return err
		}
		for _, n := range shards {
			subs := byShard[n]
			delete(byShard, n) // let go of each shard's list once used
			if err := fn(n, subs); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range shards {
		subs, err := st.SubscriptionsInShard(ctx, n)
		if err != nil {
			return err
		}
		if err := fn(n, subs); err != nil {
			return err
		}
	}
	return nil
}
