package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
)

// opList is the engine's listing of subscriptions, followed by its health.
const opList = "listing subscriptions"

// followState is how the engine keeps up with the subscriptions of the
// shards it listed.
type followState struct {
	// mark is the engine's mark in the store's hub.SubscriptionFeed, ""
	// when it has none; Run's goroutine only.
	mark string
	// notes, when set (HandListings), is told every listing and change
	// the engine applies; under Webhooks.mu.
	notes hub.ShardNotes
}

// HandListings has the engine tell notes (the hub's lease sweep) every
// shard listing it takes and every subscription change it follows, so
// that the sweep need not read them again. Call it before Run.
func (w *Webhooks) HandListings(notes hub.ShardNotes) {
	w.mu.Lock()
	w.follow.notes = notes
	w.mu.Unlock()
}

// The hub whose Activator the engine is hands the engine its lease sweep's
// notes (hub.New): the engine holds shards and tells their listings.
var _ interface {
	hub.Activator
	Shards() []int
	HandListings(hub.ShardNotes)
} = (*Webhooks)(nil)

func (w *Webhooks) listingNotes() hub.ShardNotes {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.follow.notes
}

// reconcile brings the queues of the shards this engine holds in line with
// the store. When the store tells the subscription writes since the last
// reconcile (hub.SubscriptionFeed), it applies those and lists only the
// shards taken since; else it reads the shard versions and lists every
// held shard whose version moved since its last listing (or that has not
// been listed since it was taken). An idle hub does a read or two per
// interval, whatever the number of subscriptions. Changes made by Activate
// or Deactivate after a listing was taken win over the listing.
func (w *Webhooks) reconcile(ctx context.Context) {
	w.mu.Lock()
	g0 := w.gen
	w.mu.Unlock()

	synced, err := w.listShards(ctx)
	if w.h.Report(ctx, opList, err) != nil {
		return // the next tick retries; running queues go on
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	for id, dg := range w.deactivated {
		if dg <= g0 { // every listing from now on was taken after it
			delete(w.deactivated, id)
		}
	}
	if synced {
		hosts := make(map[string]bool, len(w.queues))
		callbacks := make(map[string]bool, len(w.queues))
		for _, q := range w.queues {
			hosts[q.host] = true
			callbacks[q.callback] = true
		}
		w.breakers.prune(hosts)
		w.callbacks.prune(callbacks)
	}
}

// listShards follows the store's changes or reads the shard versions, and
// lists every shard that needs it (see reconcile): the contacts with the
// store whose outcome reconcile reports. It reports whether a shard was
// listed.
func (w *Webhooks) listShards(ctx context.Context) (synced bool, err error) {
	if _, last, err := w.log.Bounds(ctx); err == nil {
		w.noteSeq(last)
	}
	feed, _ := w.store.(hub.SubscriptionFeed)
	followed := false
	if feed != nil && w.follow.mark != "" {
		if followed, err = w.followChanges(ctx, feed); err != nil {
			return false, err
		}
	}
	if feed != nil && !followed { // a mark before the listings the changes follow
		if w.follow.mark, err = feed.SubscriptionMark(ctx); err != nil && !errors.Is(err, hub.ErrFeedLost) {
			return false, err
		}
	}
	var due []int
	var vers []uint64
	for n := range hub.Shards {
		w.mu.Lock()
		st := w.shards[n]
		w.mu.Unlock()
		if !st.held || st.releasing || (followed && st.listed) {
			continue
		}
		if vers == nil {
			if vers, err = w.shardVersions(ctx); err != nil {
				return false, err
			}
		}
		if !(st.listed && w.listedVer[n] == vers[n]) {
			due = append(due, n)
		}
	}
	if bl, ok := w.store.(hub.ShardsLister); ok && len(due) >= hub.BatchListMin {
		return w.syncShards(ctx, bl, due, vers)
	}
	for _, n := range due {
		if err := w.syncShard(ctx, n, vers[n]); err != nil {
			return synced, err
		}
		w.listedVer[n] = vers[n]
		synced = true
	}
	return synced, nil
}

// shardVersions reads the store's shard versions.
func (w *Webhooks) shardVersions(ctx context.Context) ([]uint64, error) {
	vers, err := w.store.ShardVersions(ctx)
	if err == nil && len(vers) != hub.Shards {
		err = fmt.Errorf("store returned %d shard versions, want %d", len(vers), hub.Shards)
	}
	return vers, err
}

// followChanges applies the subscription writes since the engine's mark
// to the shards it listed and reports whether it could: when the feed lost
// track, the engine lists the shards that moved instead.
func (w *Webhooks) followChanges(ctx context.Context, feed hub.SubscriptionFeed) (bool, error) {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()
	changes, next, err := feed.SubscriptionChanges(ctx, w.follow.mark, hub.MaxFollowed)
	if errors.Is(err, hub.ErrFeedLost) {
		w.logger.Info("subscription changes lost; listing the shards that moved", "err", err)
		w.follow.mark = ""
		return false, nil
	}
	if err != nil {
		return false, err
	}
	w.follow.mark = next
	if len(changes) == 0 {
		return true, nil
	}
	w.applyChanges(g, changes, feed)
	if notes := w.listingNotes(); notes != nil {
		notes.SubscriptionsChanged(changes)
	}
	return true, nil
}

// applyChanges applies changes, read after generation g, to the queues of
// the shards held and listed.
func (w *Webhooks) applyChanges(g uint64, changes []hub.SubscriptionChange, feed hub.SubscriptionFeed) {
	now := w.cfg.Clock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runCtx == nil || w.runCtx.Err() != nil {
		return
	}
	gone := map[int]map[string]bool{} // keys deleted, by shard
	for _, c := range changes {
		if !w.ownsLocked(c.Shard) || !w.shards[c.Shard].listed {
			continue // listed when taken
		}
		if !c.Deleted {
			w.applySubLocked(c.Sub, g, now, nil)
			continue
		}
		if gone[c.Shard] == nil {
			gone[c.Shard] = map[string]bool{}
		}
		gone[c.Shard][c.Key] = true
	}
	if len(gone) == 0 {
		return
	}
	for _, q := range w.queues { // a deletion names the key, not the ID
		if keys := gone[q.shard]; keys != nil && q.gen <= g && keys[feed.SubscriptionKey(q.id)] {
			w.retireLocked(q)
		}
	}
}

// syncShards lists the shards due in one pass, as when the engine starts
// or takes over a dead hub's shards, and syncs each, its queues starting
// from the state read in bulk (prefetch). hub.ListShards would hand the
// shards over one by one; the bulk read of their state needs them all.
func (w *Webhooks) syncShards(ctx context.Context, bl hub.ShardsLister, due []int, vers []uint64) (bool, error) {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()
	byShard, err := bl.SubscriptionsInShards(ctx, due)
	if err != nil {
		return false, err
	}
	pre := w.prefetch(ctx, byShard)
	w.mu.Lock()
	running := len(w.queues) > 0
	w.mu.Unlock()
	if running { // a start has none to retire: no index of a million IDs
		listed, seen := map[int]bool{}, map[string]bool{}
		for _, n := range due {
			listed[n] = true
			for _, s := range byShard[n] {
				seen[s.ID] = true
			}
		}
		w.retireUnlisted(listed, seen, g)
	}
	for _, n := range due {
		w.applyListing(n, g, vers[n], byShard[n], pre)
		delete(byShard, n) // let go of each shard's list once applied
		w.listedVer[n] = vers[n]
	}
	return true, nil
}

// syncShard lists the subscriptions of shard n, at version ver, and
// applies them.
func (w *Webhooks) syncShard(ctx context.Context, n int, ver uint64) error {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()
	subs, err := w.store.SubscriptionsInShard(ctx, n)
	if err != nil {
		return fmt.Errorf("shard %d: %w", n, err)
	}
	seen := make(map[string]bool, len(subs))
	for _, s := range subs {
		seen[s.ID] = true
	}
	w.retireUnlisted(map[int]bool{n: true}, seen, g)
	w.applyListing(n, g, ver, subs, nil)
	return nil
}

// applyListing applies subs, a listing of shard n at version ver (see
// applyShard), and hands it to the listing notes. It reports whether the
// engine holds the shard.
func (w *Webhooks) applyListing(n int, g, ver uint64, subs []hub.Subscription, pre map[string]*startState) bool {
	if !w.applyShard(n, g, subs, pre) {
		return false
	}
	if notes := w.listingNotes(); notes != nil {
		notes.ShardListed(n, ver, subs)
	}
	return true
}

// retireUnlisted stops the queues of the shards listed, where the engine
// holds them, whose subscription their listings, taken after generation g,
// do not hold (seen), before the listings are applied (applyShard): one
// pass over the queues for every shard of a listing, which at a start is
// every shard (a pass per shard was 64 passes over a million queues).
func (w *Webhooks) retireUnlisted(listed map[int]bool, seen map[string]bool, g uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runCtx == nil || w.runCtx.Err() != nil {
		return
	}
	for id, q := range w.queues {
		if listed[q.shard] && !seen[id] && q.gen <= g && w.ownsLocked(q.shard) {
			w.retireLocked(q)
		}
	}
}

// applyShard starts or updates the queues of shard n to match subs, its
// listing taken after generation g, then applies what was activated
// before Run; retireUnlisted has stopped those it no longer holds. A queue it
// starts takes its state from pre when there. It reports whether the
// engine holds the shard.
func (w *Webhooks) applyShard(n int, g uint64, subs []hub.Subscription, pre map[string]*startState) bool {
	now := w.cfg.Clock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runCtx == nil || w.runCtx.Err() != nil || !w.ownsLocked(n) {
		return false
	}
	w.shards[n].listed = true
	for _, s := range subs {
		w.applySubLocked(s, g, now, pre)
	}
	for id, s := range w.pending {
		if hub.ShardOf(id) != n {
			continue
		}
		delete(w.pending, id)
		if w.queues[id] == nil && deliverable(s, now) {
			w.startLocked(s, nil)
		}
	}
	return true
}

// applySubLocked starts, updates or stops the queue of s, as stored after
// generation g; w.mu is held. A queue it starts takes its state from pre
// when there.
func (w *Webhooks) applySubLocked(s hub.Subscription, g uint64, now time.Time, pre map[string]*startState) {
	if w.deactivated[s.ID] > g {
		return
	}
	q := w.queues[s.ID]
	switch {
	case deliverable(s, now) && q == nil:
		st := pre[s.ID]
		if st == nil {
			st = &startState{}
		}
		w.startLocked(s, st)
	case deliverable(s, now) && q.gen <= g:
		q.setSub(s, q.gen)
	case !deliverable(s, now) && q != nil && q.gen <= g:
		w.retireLocked(q)
	}
}
