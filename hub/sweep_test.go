package hub_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// shardActivations holds only some shards, as the webhook engine of one
// hub among several sharing a store does.
type shardActivations struct {
	activations
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
	now := f.clock.Now()
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
		if err := f.store.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	state := func(s hub.Subscription) hub.SubState {
		t.Helper()
		got, err := f.store.Subscription(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.State
	}

	act.hold() // no shard held: nothing to sweep
	f.hub.SweepOnce(ctx)
	if state(subs[0]) != hub.SubActive || state(subs[1]) != hub.SubActive {
		t.Fatal("a hub holding no shard swept a lease")
	}
	act.hold(hub.ShardOf(subs[0].ID))
	f.hub.SweepOnce(ctx)
	if state(subs[0]) != hub.SubExpired {
		t.Error("the ended lease of a held shard was not swept")
	}
	if state(subs[1]) != hub.SubActive {
		t.Error("a lease of a shard held by another hub was swept")
	}
}
