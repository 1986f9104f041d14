package hub

import (
	"context"
	"errors"
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

// ShardsLister is a store that lists many shards in one pass (Store does).
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

// SubscriptionChange is the last write to one subscription that a
// SubscriptionFeed tells.
type SubscriptionChange struct {
	Shard   int          // ShardOf the subscription's ID
	Sub     Subscription // as stored now, when not Deleted
	Deleted bool
	// Key names a deleted subscription, whose ID the store may no longer
	// know: it is the SubscriptionKey of the ID.
	Key string
}

// ErrFeedLost is returned by a SubscriptionFeed that cannot tell the
// changes since a mark (unknown mark, too many changes): the reader lists
// its shards instead.
var ErrFeedLost = errors.New("subscription changes since the mark cannot be told")

// SubscriptionFeed is a store that tells which subscriptions were written
// since a mark of its own (kvstore), so that a reader holding a listing of
// some shards (the webhook engine, the lease sweep) applies those writes
// instead of listing the shards again.
type SubscriptionFeed interface {
	// SubscriptionMark returns a mark of the subscription writes so far.
	// Take it before a listing that the changes are to follow.
	SubscriptionMark(ctx context.Context) (string, error)
	// SubscriptionChanges returns the last write to each subscription
	// written after mark and the mark to follow from next; ErrFeedLost
	// (wrapped) when it cannot tell them, or they are more than max.
	SubscriptionChanges(ctx context.Context, mark string, max int) (changes []SubscriptionChange, next string, err error)
	// SubscriptionKey returns the Key a deletion of the subscription id carries.
	SubscriptionKey(id string) string
}

// MaxFollowed is how many subscription writes a reader follows at once
// (SubscriptionFeed); beyond, listing its shards again costs less.
const MaxFollowed = 20000
