package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// bulkTests are the contract of the bulk reads a starting delivery engine
// makes.
var bulkTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"DeliveryStates_CursorsAndDeadLettersOfManyAtOnce", testDeliveryStates},
	{"SubscriptionsInShards_SameAsEachShardListedAlone", testSubsInShards},
}

// testSubsInShards lists half the shards at once, after some of 300
// subscriptions were deleted: each shard holds what SubscriptionsInShard
// lists for it (every live subscription of the shard once, ordered by
// ID), a shard without subscriptions is there and empty, and no shard
// that was not asked for is.
func testSubsInShards(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	for i := range 300 {
		sub := subscription(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
		check(t, s.PutSubscription(ctx, sub))
		if i%10 == 0 {
			check(t, s.DeleteSubscription(ctx, sub.ID))
		}
	}
	var shards []int
	for n := 0; n < hub.Shards; n += 2 {
		shards = append(shards, n)
	}
	got, err := s.SubscriptionsInShards(ctx, shards)
	check(t, err)
	if len(got) != len(shards) {
		t.Fatalf("SubscriptionsInShards returned %d shards, want %d", len(got), len(shards))
	}
	total := 0
	for _, n := range shards {
		want, err := s.SubscriptionsInShard(ctx, n)
		check(t, err)
		subs, ok := got[n]
		if !ok {
			t.Fatalf("shard %d missing", n)
		}
		same(t, fmt.Sprintf("shard %d", n), len(subs), len(want))
		for i := range want {
			same(t, fmt.Sprintf("shard %d, subscription %d", n, i), subs[i], want[i])
		}
		total += len(subs)
	}
	if total == 0 {
		t.Fatal("no subscription listed: the test proves nothing")
	}
}

// testDeliveryStates stores cursors for every third of 700 subscriptions
// (more than one read's worth) and dead letters for every seventh, then
// reads them all back at once with IDs that have nothing and one that
// names no subscription: each stored cursor comes back exactly, no other;
// every subscription with a dead letter may have some, and one that never
// had any does not.
func testDeliveryStates(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	const n = 700
	ids := make([]string, 0, n+1)
	cursors := map[string]hub.Cursor{}
	dead := map[string]bool{}
	for i := range n {
		id := hub.SubscriptionID(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
		ids = append(ids, id)
		if i%3 == 0 {
			c := hub.Cursor{Seq: uint64(i + 1), Until: t0.Add(time.Duration(i) * time.Second)}
			check(t, s.PutCursor(ctx, id, c))
			cursors[id] = c
		}
		if i%7 == 0 {
			check(t, s.AddDeadLetter(ctx, hub.DeadLetter{ID: "d", SubID: id, Seq: 1, Failed: t0}))
			dead[id] = true
		}
	}
	ids = append(ids, hub.SubscriptionID(Topics[0], "https://nobody.example/"))
	got, mayDead, err := s.DeliveryStates(ctx, ids)
	check(t, err)
	if len(got) != len(cursors) {
		t.Errorf("DeliveryStates read %d cursors, want %d", len(got), len(cursors))
	}
	for id, c := range cursors {
		same(t, "cursor of "+id, got[id], c)
	}
	for _, id := range ids {
		if dead[id] && !mayDead[id] {
			t.Errorf("%s has a dead letter, DeliveryStates says it has none", id)
		}
		if !dead[id] && mayDead[id] {
			t.Errorf("%s never had a dead letter, DeliveryStates says it may", id)
		}
	}
}
