package hub_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// shardActivations holds only some shards, as the webhook engine of one
// hub among several sharing a store does.
type shardActivations struct {
	hubtest.Activations
	mu     sync.Mutex
	shards []int
}

func (a *shardActivations) Shards() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.shards
}

func (a *shardActivations) hold(shards ...int) {
	a.mu.Lock()
	a.shards = shards
	a.mu.Unlock()
}

// With hubs sharing a store, each sweeps the leases of the shards its
// delivery engine holds: together they sweep every shard once.
func TestLease_SweepCoversTheShardsHeld(t *testing.T) {
	act := &shardActivations{}
	f := newFixture(t, func(c *hub.Config) { c.Activator = act })
	ctx := context.Background()
	now := f.Clock.Now()
	var subs []hub.Subscription
	for i := 0; len(subs) < 2; i++ {
		cb := "http://127.0.0.1:1/cb/" + strconv.Itoa(i)
		s := hub.Subscription{
			ID: hub.SubscriptionID(openTopic, cb), Topic: openTopic, Callback: cb, Lease: 300,
			Expires: now.Add(-time.Minute), State: hub.SubActive, Created: now.Add(-time.Hour), Verified: now.Add(-time.Hour),
		}
		if len(subs) == 1 && hub.ShardOf(s.ID) == hub.ShardOf(subs[0].ID) {
			continue
		}
		if err := f.Store.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	state := func(s hub.Subscription) hub.SubState {
		t.Helper()
		got, err := f.Store.Subscription(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State
	}

	act.hold() // no shard held: nothing to sweep
	f.Hub.SweepOnce(ctx)
	if state(subs[0]) != hub.SubActive || state(subs[1]) != hub.SubActive {
		t.Fatal("a hub holding no shard swept a lease")
	}
	act.hold(hub.ShardOf(subs[0].ID))
	f.Hub.SweepOnce(ctx)
	if state(subs[0]) != hub.SubExpired {
		t.Error("the ended lease of a held shard was not swept")
	}
	if state(subs[1]) != hub.SubActive {
		t.Error("a lease of a shard held by another hub was swept")
	}
}

// countingStore counts the shard listings read with a counted context (the
// hub's own sweeper runs beside the test's passes).
type countingStore struct {
	hub.Store
	mu    sync.Mutex
	reads []int
}

type countedKey struct{}

func (c *countingStore) SubscriptionsInShard(ctx context.Context, n int) ([]hub.Subscription, error) {
	if ctx.Value(countedKey{}) != nil {
		c.mu.Lock()
		c.reads = append(c.reads, n)
		c.mu.Unlock()
	}
	return c.Store.SubscriptionsInShard(ctx, n)
}

// SubscriptionsInShards counts each shard of a listing of many at once as
// read.
func (c *countingStore) SubscriptionsInShards(ctx context.Context, shards []int) (map[int][]hub.Subscription, error) {
	if ctx.Value(countedKey{}) != nil {
		c.mu.Lock()
		c.reads = append(c.reads, shards...)
		c.mu.Unlock()
	}
	return c.Store.SubscriptionsInShards(ctx, shards)
}

// take returns the shards read since the last take.
func (c *countingStore) take() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reads
	c.reads = nil
	return out
}

// The periodic sweep re-reads a shard only when its version moved: at rest
// it reads none, whatever the number of subscriptions, and a lease that
// ends costs a read of that subscription alone.
func TestLease_PeriodicSweepReadsOnlyShardsChangedOrDue(t *testing.T) {
	var cs *countingStore
	f := newFixture(t, func(c *hub.Config) {
		cs = &countingStore{Store: c.Store}
		c.Store = cs
		c.Leases = hub.LeasePolicy{Min: 3600, Default: 3600, Max: 3600} // the fixture's own sweeper ticks every 30 s
	})
	ctx := context.WithValue(context.Background(), countedKey{}, true)
	now := f.Clock.Now()
	put := func(i int, expires time.Time) hub.Subscription {
		cb := "http://127.0.0.1:1/cb/" + strconv.Itoa(i)
		s := hub.Subscription{
			ID: hub.SubscriptionID(openTopic, cb), Topic: openTopic, Callback: cb, Lease: 3600,
			Expires: expires, State: hub.SubActive, Created: now, Verified: now,
		}
		if err := f.Store.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	soon := put(0, now.Add(time.Hour))
	put(1, now.Add(240*time.Hour))

	var swept hub.SweptShards
	sweep := func() []int {
		t.Helper()
		cs.take()
		if err := hub.SweepDue(ctx, f.Hub, &swept); err != nil {
			t.Fatal(err)
		}
		return cs.take()
	}
	if got := sweep(); len(got) != hub.Shards {
		t.Fatalf("first pass read %d shards, want all %d", len(got), hub.Shards)
	}
	if got := sweep(); len(got) != 0 {
		t.Fatalf("a pass at rest read shards %v", got)
	}
	f.Clock.Advance(2 * time.Hour)
	if got := sweep(); len(got) != 0 {
		t.Fatalf("after a lease ended the pass read shards %v, want none (it reads the one subscription)", got)
	}
	if s, err := f.Store.Subscription(ctx, soon.ID); err != nil || s.State != hub.SubExpired {
		t.Fatalf("the ended lease: %+v, %v", s, err)
	}
	sweep() // the expiry itself moved the shard's version
	if got := sweep(); len(got) != 0 {
		t.Fatalf("a pass at rest read shards %v", got)
	}
	added := put(2, f.Clock.Now().Add(time.Hour))
	if got := sweep(); !slices.Equal(got, []int{hub.ShardOf(added.ID)}) {
		t.Fatalf("after a subscription was added the pass read shards %v, want only %d", got, hub.ShardOf(added.ID))
	}
}
