package hub_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// countingKV is a kvstore, with its feed of changes, counting the
// subscriptions listed with a counted context.
type countingKV struct {
	*kvstore.Store
	listed atomic.Int64
	lose   atomic.Bool // the next SubscriptionChanges loses track
}

func (c *countingKV) SubscriptionChanges(ctx context.Context, mark string, max int) ([]hub.SubscriptionChange, string, error) {
	if c.lose.CompareAndSwap(true, false) {
		return nil, "", fmt.Errorf("test: %w", hub.ErrFeedLost)
	}
	return c.Store.SubscriptionChanges(ctx, mark, max)
}

func (c *countingKV) count(ctx context.Context, n int) {
	if ctx.Value(countedKey{}) != nil {
		c.listed.Add(int64(n))
	}
}

func (c *countingKV) SubscriptionsInShard(ctx context.Context, n int) ([]hub.Subscription, error) {
	subs, err := c.Store.SubscriptionsInShard(ctx, n)
	c.count(ctx, len(subs))
	return subs, err
}

func (c *countingKV) SubscriptionsInShards(ctx context.Context, ns []int) (map[int][]hub.Subscription, error) {
	by, err := c.Store.SubscriptionsInShards(ctx, ns)
	for _, subs := range by {
		c.count(ctx, len(subs))
	}
	return by, err
}

// leaseSub is an active subscription to openTopic for callback i whose
// lease ends at exp.
func leaseSub(i int, now, exp time.Time) hub.Subscription {
	cb := "http://127.0.0.1:1/cb/" + strconv.Itoa(i)
	return hub.Subscription{
		ID: hub.SubscriptionID(openTopic, cb), Topic: openTopic, Callback: cb, Lease: 3600,
		Expires: exp, State: hub.SubActive, Created: now, Verified: now,
	}
}

// sweepRig is a hub over a counted kvstore whose lease sweep keeps up with
// the store by itself, and another hub's client of the same buckets.
type sweepRig struct {
	t     *testing.T
	ctx   context.Context // counted
	f     *fixture
	mine  *kvstore.Store
	other *kvstore.Store
	ck    *countingKV
	st    *hub.SweptShards
}

func newSweepRig(t *testing.T) *sweepRig {
	_, nc := testenv.NATS(t)
	r := &sweepRig{t: t, ctx: context.WithValue(context.Background(), countedKey{}, true), st: hub.NewSweptShards(nil)}
	var err error
	for _, s := range []**kvstore.Store{&r.mine, &r.other} {
		if *s, err = kvstore.Open(r.ctx, nc, kvstore.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	r.ck = &countingKV{Store: r.mine}
	r.f = newFixture(t, func(c *hub.Config) {
		c.Store = r.ck
		c.Leases = hub.LeasePolicy{Min: 3600, Default: 3600, Max: 3600} // the fixture's own sweeper ticks every 30 s
	})
	return r
}

// put stores subs through this hub's store.
func (r *sweepRig) put(subs ...hub.Subscription) {
	r.t.Helper()
	for _, s := range subs {
		if err := r.mine.PutSubscription(r.ctx, s); err != nil {
			r.t.Fatal(err)
		}
	}
}

// sweep runs one pass and returns the subscriptions it listed.
func (r *sweepRig) sweep() int64 {
	r.t.Helper()
	before := r.ck.listed.Load()
	if err := hub.SweepDue(r.ctx, r.f.Hub, r.st); err != nil {
		r.t.Fatal(err)
	}
	return r.ck.listed.Load() - before
}

// A sweep that keeps up with the store by itself (no shard holder hands it
// listings) lists every shard once, then follows the store's changes: a
// renewal, a subscription, an unsubscription and an expiry made by another
// hub cost it no listing, and a lease that another hub's subscription
// brought forward is still swept when it ends, by reading it alone.
func TestLease_SweepFollowsAnotherHubsWritesWithoutListing(t *testing.T) {
	r := newSweepRig(t)
	ctx, f, mine, other := r.ctx, r.f, r.mine, r.other
	now := f.Clock.Now()
	const n = 200
	var subs []hub.Subscription
	for i := range n {
		subs = append(subs, leaseSub(i, now, now.Add(240*time.Hour)))
	}
	r.put(subs...)
	if got := r.sweep(); got != n {
		t.Fatalf("first pass listed %d subscriptions, want %d", got, n)
	}

	renewed, expired := subs[0], subs[2]
	renewed.Expires = renewed.Expires.Add(time.Hour)
	expired.State = hub.SubExpired
	soon := leaseSub(n, now, now.Add(time.Hour))
	for _, s := range []hub.Subscription{renewed, expired, soon} {
		if err := other.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.DeleteSubscription(ctx, subs[1].ID); err != nil {
		t.Fatal(err)
	}
	if got := r.sweep(); got != 0 {
		t.Fatalf("four writes had the sweep list %d subscriptions", got)
	}

	f.Clock.Advance(2 * time.Hour)
	if got := r.sweep(); got != 0 {
		t.Errorf("the lease's end had the sweep list %d subscriptions, want none (it reads the one subscription)", got)
	}
	if s, err := mine.Subscription(ctx, soon.ID); err != nil || s.State != hub.SubExpired {
		t.Fatalf("the lease another hub made and that ended: %+v, %v", s, err)
	}
}

// listingActivations holds every shard and hands its listings to the
// sweep, as the webhook engine does.
type listingActivations struct {
	hubtest.Activations
	mu    sync.Mutex
	notes hub.ShardNotes
}

func (a *listingActivations) Shards() []int {
	out := make([]int, hub.Shards)
	for n := range out {
		out[n] = n
	}
	return out
}

func (a *listingActivations) HandListings(to hub.ShardNotes) {
	a.mu.Lock()
	a.notes = to
	a.mu.Unlock()
}

// With a shard holder that hands it its listings and changes, the sweep
// lists nothing the holder has listed, and a lease that ends, from a
// listing or from a change handed since, costs it a read of that one
// subscription.
func TestLease_SweepUsesTheListingsItIsHanded(t *testing.T) {
	var cs *countingStore
	act := &listingActivations{}
	f := newFixture(t, func(c *hub.Config) {
		cs = &countingStore{Store: c.Store}
		c.Store = cs
		c.Activator = act
		c.Leases = hub.LeasePolicy{Min: 3600, Default: 3600, Max: 3600}
	})
	ctx := context.WithValue(context.Background(), countedKey{}, true)
	now := f.Clock.Now()
	var long hub.Subscription
	for i := range 40 {
		long = leaseSub(i, now, now.Add(240*time.Hour))
		if err := f.Store.PutSubscription(ctx, long); err != nil {
			t.Fatal(err)
		}
	}
	st := hub.NewSweptShards(act)
	sweep := func() []int {
		t.Helper()
		cs.take()
		if err := hub.SweepDue(ctx, f.Hub, st); err != nil {
			t.Fatal(err)
		}
		return cs.take()
	}
	if got := sweep(); len(got) != 0 {
		t.Fatalf("before the holder listed, the sweep read shards %v", got)
	}
	for n := range hub.Shards { // the holder lists its shards
		subs, err := f.Store.SubscriptionsInShard(context.Background(), n)
		if err != nil {
			t.Fatal(err)
		}
		act.notes.ShardListed(n, 0, subs)
	}
	if got := sweep(); len(got) != 0 {
		t.Fatalf("the sweep read shards %v it was handed", got)
	}
	soon := leaseSub(100, now, now.Add(time.Hour))
	if err := f.Store.PutSubscription(ctx, soon); err != nil {
		t.Fatal(err)
	}
	act.notes.SubscriptionsChanged([]hub.SubscriptionChange{{Shard: hub.ShardOf(soon.ID), Sub: soon}})
	if got := sweep(); len(got) != 0 {
		t.Fatalf("a change handed had the sweep read shards %v", got)
	}
	f.Clock.Advance(2 * time.Hour)
	if got := sweep(); len(got) != 0 {
		t.Fatalf("the lease's end had the sweep read shards %v, want none (it reads the one subscription)", got)
	}
	if s, err := f.Store.Subscription(ctx, soon.ID); err != nil || s.State != hub.SubExpired {
		t.Fatalf("the ended lease: %+v, %v", s, err)
	}
	if s, err := f.Store.Subscription(ctx, long.ID); err != nil || s.State != hub.SubActive {
		t.Fatalf("a lease not ended: %+v, %v", s, err)
	}
}

// When the store loses track of the changes, the sweep lists the shards
// whose version moved since it read them, then follows the changes again.
func TestLease_SweepListsTheShardsMovedWhenChangesAreLost(t *testing.T) {
	r := newSweepRig(t)
	now := r.f.Clock.Now()
	var subs []hub.Subscription
	for i := range 100 {
		subs = append(subs, leaseSub(i, now, now.Add(240*time.Hour)))
	}
	r.put(subs...)
	r.sweep()
	renew := func() {
		t.Helper()
		subs[0].Expires = subs[0].Expires.Add(time.Hour)
		r.put(subs[0])
	}
	r.ck.lose.Store(true)
	renew()
	shardSize := 0
	for _, s := range subs {
		if hub.ShardOf(s.ID) == hub.ShardOf(subs[0].ID) {
			shardSize++
		}
	}
	if got := r.sweep(); got != int64(shardSize) {
		t.Errorf("with the changes lost the sweep listed %d subscriptions, want the moved shard's %d", got, shardSize)
	}
	renew()
	if got := r.sweep(); got != 0 {
		t.Errorf("after the fallback a renewal had the sweep list %d subscriptions", got)
	}
}

// Leases that end one after another in a shard of many subscriptions
// cost the sweep a read of each, and a listing of the shard only every
// few dozen ends: 200 ends, a minute apart, over 200 passes, list the
// shard a handful of times, not 200, and expire each lease once it ended.
func TestLease_EndsOneAfterAnotherListTheirShardRarely(t *testing.T) {
	r := newSweepRig(t)
	now := r.f.Clock.Now()
	const n = 200
	var subs []hub.Subscription
	for i := 0; len(subs) < n; i++ {
		s := leaseSub(i, now, time.Time{})
		if hub.ShardOf(s.ID) != 0 {
			continue
		}
		s.Expires = now.Add(time.Hour + time.Duration(len(subs))*time.Minute)
		subs = append(subs, s)
	}
	r.put(subs...)
	r.sweep()
	var listed int64
	r.f.Clock.Advance(time.Hour - 30*time.Second) // each pass half a minute after an end (the clock runs on too)
	for i := range subs {
		r.f.Clock.Advance(time.Minute)
		listed += r.sweep()
		if i%50 == 0 || i == n-1 { // the lease that just ended is expired, the next one not yet
			if s, err := r.mine.Subscription(r.ctx, subs[i].ID); err != nil || s.State != hub.SubExpired {
				t.Fatalf("lease %d ended, not expired: %+v, %v", i, s.State, err)
			}
			if i+1 < n {
				if s, err := r.mine.Subscription(r.ctx, subs[i+1].ID); err != nil || s.State != hub.SubActive {
					t.Fatalf("lease %d not ended yet: %+v, %v", i+1, s.State, err)
				}
			}
		}
	}
	listings := float64(listed) / n
	t.Logf("%d lease ends listed the shard %.1f times", n, listings)
	if listings > 5 {
		t.Fatalf("%d lease ends listed the shard %.1f times, want at most 5", n, listings)
	}
}
