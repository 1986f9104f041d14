package delivery

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// countingFeed is a kvstore counting the subscriptions it lists and the
// changes it tells; lose makes its next SubscriptionChanges lose track.
type countingFeed struct {
	*kvstore.Store
	listed, told atomic.Int64
	lose         atomic.Bool
}

func (c *countingFeed) SubscriptionsInShard(ctx context.Context, n int) ([]hub.Subscription, error) {
	subs, err := c.Store.SubscriptionsInShard(ctx, n)
	c.listed.Add(int64(len(subs)))
	return subs, err
}

func (c *countingFeed) SubscriptionsInShards(ctx context.Context, ns []int) (map[int][]hub.Subscription, error) {
	by, err := c.Store.SubscriptionsInShards(ctx, ns)
	for _, subs := range by {
		c.listed.Add(int64(len(subs)))
	}
	return by, err
}

// SubscriptionChanges loses the first changes read once lose is set:
// losing a read that had none raced with the test's write after it.
func (c *countingFeed) SubscriptionChanges(ctx context.Context, mark string, max int) ([]hub.SubscriptionChange, string, error) {
	changes, next, err := c.Store.SubscriptionChanges(ctx, mark, max)
	if err == nil && len(changes) > 0 && c.lose.CompareAndSwap(true, false) {
		return nil, "", fmt.Errorf("test: %w", hub.ErrFeedLost)
	}
	c.told.Add(int64(len(changes)))
	return changes, next, err
}

// notesRecorder records what an engine hands the lease sweep.
type notesRecorder struct {
	mu      sync.Mutex
	listed  map[int]int // shard → subscriptions in its last listing
	changes []hub.SubscriptionChange
}

func (r *notesRecorder) ShardListed(n int, _ uint64, subs []hub.Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listed[n] = len(subs)
}

func (r *notesRecorder) SubscriptionsChanged(cs []hub.SubscriptionChange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, cs...)
}

func (r *notesRecorder) total() (shards, subs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.listed {
		subs += n
	}
	return len(r.listed), subs
}

func (r *notesRecorder) told(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.changes {
		if c.Key == key {
			return true
		}
	}
	return false
}

// followEnv is an engine on a countingFeed holding n subscriptions, every
// one delivering, and another hub's client of the same buckets.
type followEnv struct {
	*env
	w     *Webhooks
	cs    *countingFeed
	other *kvstore.Store
	notes *notesRecorder
	subs  []hub.Subscription
}

func newFollowEnv(t *testing.T, n int) *followEnv {
	e := newEnv(t)
	e.channel(topic, "feed")
	f := &followEnv{env: e, cs: &countingFeed{Store: e.store}, notes: &notesRecorder{listed: map[int]int{}}}
	for i := range n {
		f.subs = append(f.subs, e.subscribe(topic, fmt.Sprintf("http://127.0.0.1:1/cb/%d", i), ""))
	}
	var err error
	if f.other, err = kvstore.Open(context.Background(), e.nc, e.storeConfig()); err != nil {
		t.Fatal(err)
	}
	f.w = NewWebhooks(e.log, f.cs, e.fastConfig())
	f.w.HandListings(f.notes)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, wait, func() bool { return f.running() == n }, "every subscription delivering")
	return f
}

func (f *followEnv) running() int {
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	return len(f.w.queues)
}

func (f *followEnv) put(s hub.Subscription) {
	f.t.Helper()
	if err := f.other.PutSubscription(context.Background(), s); err != nil {
		f.t.Fatal(err)
	}
}

// expiresAt reports whether id's queue runs with a lease ending at exp.
func (f *followEnv) expiresAt(id string, exp time.Time) bool {
	q := f.w.queueFor(id)
	return q != nil && q.getSub().Expires.Equal(exp)
}

// A renewal, a subscription, an unsubscription and an expiry written by
// another hub reach this engine's queues and the lease sweep it hands
// changes to, without a listing: after its start the engine reads one
// change per write, not the shards of the subscriptions written.
func TestWebhooks_FollowsAnotherHubsWritesWithoutListing(t *testing.T) {
	t.Parallel()
	const n = 300
	f := newFollowEnv(t, n)
	testenv.Eventually(t, wait, func() bool { s, subs := f.notes.total(); return s == hub.Shards && subs == n }, "every listing handed to the sweep")
	listed := f.cs.listed.Load()
	if listed != n {
		t.Fatalf("start listed %d subscriptions, want %d", listed, n)
	}

	renewed := f.subs[0]
	renewed.Expires = renewed.Expires.Add(time.Hour)
	f.put(renewed)
	testenv.Eventually(t, wait, func() bool { return f.expiresAt(renewed.ID, renewed.Expires) }, "renewal applied")
	testenv.Eventually(t, wait, func() bool { return f.notes.told(f.cs.SubscriptionKey(renewed.ID)) }, "renewal handed to the sweep")

	added := f.subs[1]
	added.ID, added.Callback = hub.SubscriptionID(topic, "http://127.0.0.1:1/new"), "http://127.0.0.1:1/new"
	f.put(added)
	testenv.Eventually(t, wait, func() bool { return f.w.queueFor(added.ID) != nil }, "new subscription started")

	if err := f.other.DeleteSubscription(context.Background(), f.subs[2].ID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() bool { return f.w.queueFor(f.subs[2].ID) == nil }, "unsubscribed one stopped")

	expired := f.subs[3]
	expired.State = hub.SubExpired
	f.put(expired)
	testenv.Eventually(t, wait, func() bool { return f.w.queueFor(expired.ID) == nil }, "expired one stopped")

	if got := f.cs.listed.Load(); got != listed {
		t.Errorf("the writes had the engine list %d subscriptions", got-listed)
	}
	if told := f.cs.told.Load(); told > 8 {
		t.Errorf("four writes had the engine read %d changes", told)
	}
	if got := f.running(); got != n-2+1 {
		t.Errorf("%d queues running, want %d", got, n-1)
	}
}

// When the store loses track of the changes, the engine lists the shards
// that moved and applies the write from there, then follows again.
func TestWebhooks_LostChangesFallBackToListing(t *testing.T) {
	f := newFollowEnv(t, 50)
	listed := f.cs.listed.Load()
	f.cs.lose.Store(true)
	renewed := f.subs[0]
	renewed.Expires = renewed.Expires.Add(time.Hour)
	f.put(renewed)
	testenv.Eventually(t, wait, func() bool { return f.expiresAt(renewed.ID, renewed.Expires) }, "renewal applied by a listing")
	if f.cs.listed.Load() == listed {
		t.Fatal("the renewal was applied without a listing though the changes were lost")
	}
	listed = f.cs.listed.Load()
	renewed.Expires = renewed.Expires.Add(time.Hour)
	f.put(renewed)
	testenv.Eventually(t, wait, func() bool { return f.expiresAt(renewed.ID, renewed.Expires) }, "next renewal applied")
	if got := f.cs.listed.Load(); got != listed {
		t.Errorf("after the fallback a renewal still had the engine list %d subscriptions", got-listed)
	}
}

// Subscriptions deleted in many shards while the engine could not follow
// the changes are stopped by the listing of those shards in one pass, and
// only they: the queues of the subscriptions still stored, in the same
// shards and in others, go on.
func TestWebhooks_ListingAfterLostChangesStopsTheDeletedOnly(t *testing.T) {
	t.Parallel()
	const n = 120
	f := newFollowEnv(t, n)
	f.cs.lose.Store(true)
	gone := map[string]bool{}
	shards := map[int]bool{}
	for i, s := range f.subs {
		if i%3 != 0 {
			continue
		}
		if err := f.other.DeleteSubscription(context.Background(), s.ID); err != nil {
			t.Fatal(err)
		}
		gone[s.ID] = true
		shards[hub.ShardOf(s.ID)] = true
	}
	if len(shards) < hub.BatchListMin {
		t.Fatalf("deletions in %d shards: too few for a listing of many at once", len(shards))
	}
	testenv.Eventually(t, wait, func() bool { return f.running() == n-len(gone) }, "the deleted ones stopped")
	for _, s := range f.subs {
		if running := f.w.queueFor(s.ID) != nil; running == gone[s.ID] {
			t.Errorf("%s: running %v, deleted %v", s.ID, running, gone[s.ID])
		}
	}
}
