package delivery

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
)

// Ownership of delivery work. Hubs sharing a store split the subscription
// space's hub.Shards shards among themselves: each hub heartbeats its
// membership, computes from the live members which shards are its own
// (rendezvous hashing, so a member joining or leaving moves only its share)
// and holds the store lease "shard/<n>" of each before it runs the queues of
// the shard's subscriptions. The work per interval is one heartbeat and one
// claim per owned shard, whatever the number of subscriptions.
//
// Timing, with T = Config.ClaimTTL: leases and the heartbeat last 2T/3 and
// are renewed every T/6; a hub stops
// a shard's queues once its lease has gone a third of its length without a
// renewal, before the lease can pass to another hub. A dead hub's heartbeat
// and leases lapse within 2T/3 and the survivors take its shards at their
// next round, within T of its death. A shard leaves a live hub only after
// its queues have stopped and stored their cursors, so a joining hub takes
// its share without duplicates beyond the attempts in flight.

// shardState is this engine's hold on one shard; under Webhooks.mu.
type shardState struct {
	held      bool      // the lease is ours; queues of the shard may run
	releasing bool      // queues stopping before the lease is given up
	listed    bool      // the queues reflect a listing taken while held
	renewed   time.Time // last successful claim or renewal
}

// Operations of the ownership loop whose failures the engine's health follows.
const (
	opMembers = "heartbeating hub membership"
	opShard   = "claiming delivery shards"
)

// shardKey is the store lease of shard n.
func shardKey(n int) string { return "shard/" + strconv.Itoa(n) }

// shardLease is how long a heartbeat or shard lease lasts: two thirds of
// the claim TTL, so that a dead hub's shards move within the TTL.
func (w *Webhooks) shardLease() time.Duration { return w.cfg.ClaimTTL * 2 / 3 }

// targetShards returns which shards owner should hold when members are the
// live hubs: for each shard, the member with the highest hash of (member,
// shard). owner counts as a member even when absent from members.
func targetShards(members []string, owner string) [hub.Shards]bool {
	var out [hub.Shards]bool
	if !slices.Contains(members, owner) {
		members = append(slices.Clip(members), owner)
	}
	for n := range hub.Shards {
		best, bestScore := "", uint64(0)
		for _, m := range members {
			if s := rendezvous(m, n); best == "" || s > bestScore || (s == bestScore && m < best) {
				best, bestScore = m, s
			}
		}
		out[n] = best == owner
	}
	return out
}

// rendezvous is the score of member for shard n.
func rendezvous(member string, n int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0, byte(n)})
	x := h.Sum64()
	// FNV's last bytes mix weakly into the high bits: finish with a
	// 64-bit avalanche (splitmix64) so shards spread evenly.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// ownShards heartbeats and claims this engine's shards every sixth of the
// claim TTL until ctx ends.
func (w *Webhooks) ownShards(ctx context.Context) {
	period := w.cfg.ClaimTTL / 6
	members := []string{w.cfg.Owner}
	for {
		began := time.Now()
		hctx, cancel := context.WithTimeout(ctx, period)
		ms, err := w.store.Heartbeat(hctx, w.cfg.Owner, w.shardLease())
		cancel()
		if ctx.Err() != nil {
			return
		}
		if w.h.Report(ctx, opMembers, err) == nil { // else keep the last membership seen
			if !slices.Equal(ms, members) {
				w.logger.Info("hub membership", "members", ms)
			}
			members = ms
		}
		w.claimShards(ctx, targetShards(members, w.cfg.Owner), period)
		// Rounds start a period apart, not a period after the last one
		// ended: a slow heartbeat and round (each bounded by a period)
		// leave a lease at most two periods unrenewed.
		wait := period - time.Since(began) // a failed heartbeat or claim is retried at the backoff's pace
		for _, op := range []string{opMembers, opShard} {
			if d := w.h.RetryIn(op, loophealth.EngineRetry); d > 0 {
				wait = min(wait, d)
			}
		}
		if !sleep(ctx, wait, nil, nil) {
			return
		}
	}
}

// claimParallel bounds the claims of one round in flight at once: every
// shard, so that a round, which has one deadline, takes one claim's
// answer and not several in turn.
const claimParallel = hub.Shards

// claimShards claims or renews every shard in target and every shard held,
// several at a time, within timeout for the whole round; gives up held shards
// outside target; and stops the queues of a held shard that another hub
// took or that has not been renewed for a third of a lease.
func (w *Webhooks) claimShards(ctx context.Context, target [hub.Shards]bool, timeout time.Duration) {
	type result struct {
		ok  bool
		err error
	}
	var res [hub.Shards]*result
	sem := make(chan struct{}, claimParallel)
	var wg sync.WaitGroup
	started := time.Now() // a lease renewed in this round lasts from before its claim
	// One deadline for the whole round, the wait for a claim slot
	// included: a round never outlasts timeout, however many shards are
	// held and however slowly the store answers. With a deadline per
	// claim, a store answering each claim just in time made a round of 64
	// shards last four timeouts; the leases claimed first lapsed before
	// the next round renewed them, no claim having failed, and another hub
	// took their shards while this one still delivered.
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w.mu.Lock()
	for n := range hub.Shards {
		if !target[n] && !w.shards[n].held {
			continue
		}
		r := &result{}
		res[n] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-rctx.Done():
			}
			if err := rctx.Err(); err != nil { // the round ended before a slot was free
				r.err = fmt.Errorf("claim %q not sent: %w", shardKey(n), err)
				return
			}
			r.ok, r.err = w.store.Claim(rctx, shardKey(n), w.cfg.Owner, w.shardLease())
		}()
	}
	w.mu.Unlock()
	wg.Wait()
	if ctx.Err() != nil {
		return
	}

	var failed error
	var unwanted, releasing []int
	acquired := false
	w.mu.Lock()
	for n, r := range res {
		st := &w.shards[n]
		switch {
		case r == nil:
			continue
		case r.err != nil:
			failed = r.err
			continue
		case r.ok && !st.held && target[n]:
			*st = shardState{held: true, renewed: started}
			acquired = true
		case r.ok && !st.held: // released meanwhile and no longer ours
			unwanted = append(unwanted, n)
		case r.ok:
			st.renewed = started
		case st.held: // another hub holds it: our lease lapsed
			w.logger.Warn("shard taken by another hub; stopping its deliveries", "shard", n)
			w.dropShardLocked(n)
		}
		if st.held && !st.releasing && !target[n] {
			st.releasing = true
			releasing = append(releasing, n)
		}
	}
	if failed != nil {
		for n := range w.shards {
			if st := w.shards[n]; st.held && time.Since(st.renewed) > w.shardLease()/3 {
				w.logger.Warn("shard lease not renewed; stopping its deliveries", "shard", n, "err", failed)
				w.dropShardLocked(n)
			}
		}
	}
	w.mu.Unlock()

	for _, n := range unwanted {
		w.releaseKey(ctx, shardKey(n))
	}
	for _, n := range releasing {
		w.release(ctx, n)
	}
	w.h.Report(ctx, opShard, failed)
	if acquired {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// dropShardLocked gives shard n up at once and stops its queues; w.mu is
// held.
func (w *Webhooks) dropShardLocked(n int) {
	w.shards[n] = shardState{}
	w.afterStopped(n, w.retireShardLocked(n), nil)
}

// afterStopped, on a goroutine of w.wg, stores the cursors the queues of
// shard n reached (cursor.go) at once, then again once the stopping ones
// have ended, then calls then when not nil. A shard whose lease is lost
// gets its cursors stored as soon as can be too: the first write covers
// the queues not in the middle of a POST, before the lease lapses.
func (w *Webhooks) afterStopped(n int, stopping []*queue, then func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ofShard := func(shard int) bool { return shard == n }
		_, _ = w.cursors.flush(context.Background(), ofShard) // retried below
		for _, q := range stopping {
			<-q.doneChan() // each ends within Grace once stopped
		}
		if !w.cursors.final(context.Background(), ofShard) {
			w.logger.Warn("cursors of a shard not stored; the hub taking it will deliver again since the last stored", "shard", n)
		}
		if then != nil {
			then()
		}
	}()
}

// retireShardLocked stops the queues of shard n and returns them; w.mu is
// held.
func (w *Webhooks) retireShardLocked(n int) []*queue {
	var stopping []*queue
	for _, q := range w.queues {
		if q.shard == n {
			w.retireLocked(q)
			stopping = append(stopping, q)
		}
	}
	return stopping
}

// release stops the queues of shard n and, once they have ended (and
// stored their cursors), gives the shard's lease up so that the hub whose
// share it now is can take it. The lease is renewed meanwhile.
func (w *Webhooks) release(ctx context.Context, n int) {
	w.mu.Lock()
	stopping := w.retireShardLocked(n)
	w.mu.Unlock()
	w.afterStopped(n, stopping, func() {
		w.mu.Lock()
		st := &w.shards[n]
		if !st.releasing { // dropped meanwhile
			w.mu.Unlock()
			return
		}
		*st = shardState{}
		w.mu.Unlock()
		w.releaseKey(ctx, shardKey(n))
	})
}

// releaseKey gives up a lease, even while the engine stops.
func (w *Webhooks) releaseKey(ctx context.Context, key string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := w.store.Release(rctx, key, w.cfg.Owner); err != nil {
		w.logger.Warn("lease not released; it lapses by itself", "key", key, "err", err)
	}
}

// leave gives up every shard still held and the membership, once every
// queue has ended; Run calls it on its way out.
func (w *Webhooks) leave(ctx context.Context) {
	w.mu.Lock()
	var held []int
	for n, st := range w.shards {
		if st.held {
			held = append(held, n)
		}
		w.shards[n] = shardState{}
	}
	w.mu.Unlock()
	for _, n := range held {
		w.releaseKey(ctx, shardKey(n))
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := w.store.Heartbeat(hctx, w.cfg.Owner, 0); err != nil {
		w.logger.Warn("membership not withdrawn; it lapses by itself", "err", err)
	}
}

// ownsLocked reports whether queues of shard n may run; w.mu is held.
func (w *Webhooks) ownsLocked(n int) bool {
	st := w.shards[n]
	return st.held && !st.releasing
}

// Shards returns the shards this engine holds now, ascending.
func (w *Webhooks) Shards() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for n, st := range w.shards {
		if st.held {
			out = append(out, n)
		}
	}
	return out
}
