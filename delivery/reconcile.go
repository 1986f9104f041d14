package delivery

import (
	"context"
	"fmt"

	"github.com/rshub/rshub/hub"
)

// opList is the engine's listing of subscriptions, followed by its health.
const opList = "listing subscriptions"

// reconcile reads the store's shard versions and, for every shard this
// engine holds whose version moved since its last listing (or that has not
// been listed since it was taken), lists the shard's subscriptions and
// brings its queues in line. An idle hub does one read per interval,
// whatever the number of subscriptions. Changes made by Activate or
// Deactivate after a listing was taken win over the listing.
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
		for _, q := range w.queues {
			hosts[q.host] = true
		}
		w.breakers.prune(hosts)
	}
}

// listShards reads the shard versions and lists every shard that needs
// it (see reconcile): one contact with the store, whose outcome reconcile
// reports. It reports whether a shard was listed.
func (w *Webhooks) listShards(ctx context.Context) (synced bool, err error) {
	vers, err := w.store.ShardVersions(ctx)
	if err == nil && len(vers) != hub.Shards {
		err = fmt.Errorf("store returned %d shard versions, want %d", len(vers), hub.Shards)
	}
	if err != nil {
		return false, err
	}
	if _, last, err := w.log.Bounds(ctx); err == nil {
		w.noteSeq(last)
	}
	var due []int
	for n := range hub.Shards {
		w.mu.Lock()
		st := w.shards[n]
		w.mu.Unlock()
		if st.held && !st.releasing && !(st.listed && w.listedVer[n] == vers[n]) {
			due = append(due, n)
		}
	}
	if bl, ok := w.store.(hub.ShardsLister); ok && len(due) >= hub.BatchListMin {
		return w.syncShards(ctx, bl, due, vers)
	}
	for _, n := range due {
		if err := w.syncShard(ctx, n); err != nil {
			return synced, err
		}
		w.listedVer[n] = vers[n]
		synced = true
	}
	return synced, nil
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
	for _, n := range due {
		w.applyShard(n, g, byShard[n], pre)
		delete(byShard, n) // let go of each shard's list once applied
		w.listedVer[n] = vers[n]
	}
	return true, nil
}

// syncShard lists the subscriptions of shard n and applies them.
func (w *Webhooks) syncShard(ctx context.Context, n int) error {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()
	subs, err := w.store.SubscriptionsInShard(ctx, n)
	if err != nil {
		return fmt.Errorf("shard %d: %w", n, err)
	}
	w.applyShard(n, g, subs, nil)
	return nil
}

// applyShard starts, updates or stops the queues of shard n to match subs,
// its listing taken after generation g, then applies what was activated
// before Run. A queue it starts takes its state from pre when there.
func (w *Webhooks) applyShard(n int, g uint64, subs []hub.Subscription, pre map[string]*startState) {
	now := w.cfg.Clock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runCtx == nil || w.runCtx.Err() != nil || !w.ownsLocked(n) {
		return
	}
	w.shards[n].listed = true
	seen := make(map[string]bool, len(subs))
	for _, s := range subs {
		seen[s.ID] = true
		if w.deactivated[s.ID] > g {
			continue
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
	for id, q := range w.queues {
		if q.shard == n && !seen[id] && q.gen <= g {
			w.retireLocked(q)
		}
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
}
