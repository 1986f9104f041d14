package hub_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/rshub/rshub/hub"
)

// shardStore lists fixed subscriptions shard by shard, counting its calls.
type shardStore struct {
	byShard map[int][]hub.Subscription
	single  int
	fail    error
}

func (s *shardStore) SubscriptionsInShard(_ context.Context, n int) ([]hub.Subscription, error) {
	s.single++
	return s.byShard[n], s.fail
}

// batchStore lists many shards in one call too.
type batchStore struct {
	shardStore
	batches int
}

func (s *batchStore) SubscriptionsInShards(_ context.Context, shards []int) (map[int][]hub.Subscription, error) {
	s.batches++
	out := map[int][]hub.Subscription{}
	for _, n := range shards {
		out[n] = s.byShard[n]
	}
	return out, s.fail
}

// ListShards hands each shard's listing over in the order asked, from one
// call to a store that lists many shards when they are many, else shard by
// shard; the first error stops it.
func TestListShards_OnePassForManyShards(t *testing.T) {
	byShard := map[int][]hub.Subscription{}
	for i := range 200 {
		id := fmt.Sprintf("sub-%d", i)
		byShard[hub.ShardOf(id)] = append(byShard[hub.ShardOf(id)], hub.Subscription{ID: id})
	}
	var many, few []int
	for n := range hub.Shards {
		many = append(many, n)
	}
	few = many[:hub.BatchListMin-1]
	list := func(st hub.ShardReader, shards []int) (map[int][]hub.Subscription, []int, error) {
		got, order := map[int][]hub.Subscription{}, []int{}
		err := hub.ListShards(context.Background(), st, shards, func(n int, subs []hub.Subscription) error {
			got[n], order = subs, append(order, n)
			return nil
		})
		return got, order, err
	}
	for _, tc := range []struct {
		name          string
		batch         bool
		shards        []int
		single, calls int
	}{
		{"batch store, many shards", true, many, 0, 1},
		{"batch store, few shards", true, few, len(few), 0},
		{"plain store, many shards", false, many, len(many), 0},
	} {
		bs := &batchStore{shardStore: shardStore{byShard: byShard}}
		var st hub.ShardReader = &bs.shardStore
		if tc.batch {
			st = bs
		}
		got, order, err := list(st, tc.shards)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(order, tc.shards) {
			t.Errorf("%s: shards handed over in order %v", tc.name, order)
		}
		for _, n := range tc.shards {
			if !reflect.DeepEqual(got[n], byShard[n]) {
				t.Errorf("%s: shard %d listed %d subscriptions, want %d", tc.name, n, len(got[n]), len(byShard[n]))
			}
		}
		if bs.single != tc.single || bs.batches != tc.calls {
			t.Errorf("%s: %d single listings and %d batches, want %d and %d", tc.name, bs.single, bs.batches, tc.single, tc.calls)
		}
	}
	boom := errors.New("boom")
	for _, st := range []hub.ShardReader{&shardStore{fail: boom}, &batchStore{shardStore: shardStore{fail: boom}}} {
		if _, order, err := list(st, many); !errors.Is(err, boom) || len(order) != 0 {
			t.Errorf("%T failing: err %v after %d shards", st, err, len(order))
		}
	}
}
