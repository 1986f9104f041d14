package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// shardTests are the contract of the shard index and of membership.
var shardTests = []struct {
	name string
	fn   func(*testing.T, hub.Store)
}{
	{"SubscriptionsInShard_EveryOneInItsShardOnce", testSubsInShard},
	{"SubscriptionsInShard_RefusesAShardOutOfRange", testShardOutOfRange},
	{"ShardVersions_ChangeOnPutAndDeleteOfTheirShardOnly", testShardVersions},
	{"Heartbeat_ListsLiveMembersExpiresAndLeaves", testHeartbeat},
	{"SubscriptionsInShard_ListsEveryOneWhileTheyAreRewritten", testShardListingDuringRewrites},
}

// testShardListingDuringRewrites lists shards and topics while every
// subscription is being written again (a lease renewed, a state changed):
// no listing may miss one.
func testShardListingDuringRewrites(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	const n = 40
	topic := Topics[0]
	var subs []hub.Subscription
	for i := range n {
		sub := hub.Subscription{ID: fmt.Sprintf("rewrite%02d", i), Topic: topic, Channel: "c", Callback: fmt.Sprintf("http://127.0.0.1:9/%d", i), State: hub.SubActive}
		if err := s.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	byShard := map[int]int{}
	for _, sub := range subs {
		byShard[hub.ShardOf(sub.ID)]++
	}
	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for round := 0; ; round++ {
			for _, sub := range subs {
				select {
				case <-stop:
					writerDone <- nil
					return
				default:
				}
				sub.Lease = int64(round)
				if err := s.PutSubscription(ctx, sub); err != nil {
					writerDone <- err
					return
				}
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-writerDone; err != nil {
			t.Errorf("rewriting: %v", err)
		}
	}()
	for range 20 {
		for shard, want := range byShard {
			got, err := s.SubscriptionsInShard(ctx, shard)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != want {
				t.Fatalf("shard %d listed %d subscriptions while they were rewritten, want %d", shard, len(got), want)
			}
		}
		got, err := s.Subscriptions(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("topic listed %d subscriptions while they were rewritten, want %d", len(got), n)
		}
	}
}

func testSubsInShard(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	want := map[int][]string{}
	for i := range 200 {
		sub := subscription(Topics[i%len(Topics)], fmt.Sprintf("https://cb.example/%d", i))
		check(t, s.PutSubscription(ctx, sub))
		want[hub.ShardOf(sub.ID)] = append(want[hub.ShardOf(sub.ID)], sub.ID)
	}
	gone := subscription(Topics[0], "https://cb.example/0")
	check(t, s.DeleteSubscription(ctx, gone.ID))
	n := hub.ShardOf(gone.ID)
	want[n] = slices.DeleteFunc(want[n], func(id string) bool { return id == gone.ID })
	total := 0
	for shard := range hub.Shards {
		list, err := s.SubscriptionsInShard(ctx, shard)
		check(t, err)
		var got []string
		for _, sub := range list {
			got = append(got, sub.ID)
		}
		w := slices.Clone(want[shard])
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("shard %d lists %q, want %q", shard, got, w)
		}
		total += len(got)
	}
	if total != 199 {
		t.Fatalf("shards list %d subscriptions in all, want 199", total)
	}
}

func testShardOutOfRange(t *testing.T, s hub.Store) {
	for _, n := range []int{-1, hub.Shards, 1 << 30} {
		if _, err := s.SubscriptionsInShard(ctxT(t), n); err == nil {
			t.Fatalf("shard %d listed without an error", n)
		}
	}
}

func testShardVersions(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	versions := func() []uint64 {
		t.Helper()
		v, err := s.ShardVersions(ctx)
		check(t, err)
		if len(v) != hub.Shards {
			t.Fatalf("ShardVersions returned %d versions, want %d", len(v), hub.Shards)
		}
		return v
	}
	sub := subscription(Topics[2], "https://cb.example/versions")
	n := hub.ShardOf(sub.ID)
	changedOnly := func(before, after []uint64, what string) {
		t.Helper()
		for i := range before {
			if i == n && before[i] == after[i] {
				t.Fatalf("%s: version of shard %d did not change", what, i)
			}
			if i != n && before[i] != after[i] {
				t.Fatalf("%s: version of shard %d changed, only %d should", what, i, n)
			}
		}
	}
	v0 := versions()
	check(t, s.PutSubscription(ctx, sub))
	v1 := versions()
	changedOnly(v0, v1, "put")
	check(t, s.PutCursor(ctx, sub.ID, hub.Cursor{Seq: 7}))
	if v := versions(); !slices.Equal(v, v1) {
		t.Fatal("storing a cursor changed the shard versions")
	}
	check(t, s.DeleteSubscription(ctx, sub.ID))
	changedOnly(v1, versions(), "delete")
}

func testHeartbeat(t *testing.T, s hub.Store) {
	ctx := ctxT(t)
	beat := func(owner string, ttl time.Duration) []string {
		t.Helper()
		m, err := s.Heartbeat(ctx, owner, ttl)
		check(t, err)
		return m
	}
	if got := beat("hub-b", time.Minute); !slices.Equal(got, []string{"hub-b"}) {
		t.Fatalf("first member sees %q", got)
	}
	if got := beat("hub-a", time.Minute); !slices.Equal(got, []string{"hub-a", "hub-b"}) {
		t.Fatalf("second member sees %q, want both, sorted", got)
	}
	beat("hub-c", 200*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for slices.Contains(beat("hub-a", time.Minute), "hub-c") {
		if time.Now().After(deadline) {
			t.Fatal("a member whose heartbeat ended is still listed")
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
	if got := beat("hub-b", 0); !slices.Equal(got, []string{"hub-a"}) {
		t.Fatalf("after hub-b left: %q", got)
	}
	if _, err := s.Heartbeat(ctx, "", time.Minute); err == nil {
		t.Fatal("empty owner accepted")
	}
}
