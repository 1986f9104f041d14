package delivery

import (
	"context"
	"time"

	"github.com/rshub/rshub/hub"
)

// Parking. A queue that has caught up with its channel and stored its
// cursor parks: its goroutine ends and its runState waits in the queue
// until a signal (an append to its channel, a changed subscription, the
// end of its lease on a timer) starts a new goroutine that resumes from it.
// An idle subscription costs its queue's few hundred bytes of state and no
// goroutine stack, and resuming reads nothing from the store. The queue
// still counts in Webhooks.wg until it finishes, and stopping it finishes a
// parked queue at once (stopLocked). A parked queue holds no context, no
// goroutine and no preformatted logger: only a context of its own while a
// goroutine runs it (work).
//
// A parked queue woken to deliver waits for a slot of its callback host
// without a goroutine: in the host's line (hostLimit.line), which starts
// one with the slot handed over (held, used by the first attempt). A
// queue that delivered keeps its slot (hostSlot.kept) until its next
// attempt or until it parks; parking, it hands the slot to the next queue
// in the line and runs that queue on its own goroutine (handOn, work), so
// a fan-out to many subscriptions of one host starts a goroutine per slot,
// not one per subscription. Queues with a rate to wait for, and those not
// deliverable any more (whose wake is to stop), get a goroutine at once.

// park leaves st in q and reports true when the goroutine may end now;
// false when a wake-up is already pending or ctx has ended, so that the
// loop goes on waiting as it would without parking.
func (q *queue) park(ctx context.Context, st *runState, sub hub.Subscription, now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped || ctx.Err() != nil || len(q.wake) > 0 {
		return false
	}
	if !sub.Expires.IsZero() {
		d := sub.Expires.Sub(now)
		if d <= 0 {
			return false
		}
		q.w.leases.set(q, sub.Expires, d) // the lease's end wakes it
	}
	q.parked = st
	q.cancelRun, q.rq = nil, nil // the goroutine's context ends with it
	return true
}

// unparkLocked takes q's parked state, if any; q.mu is held. Its wake-up
// at the end of its lease stays (leaseWakes) until q finishes.
func (q *queue) unparkLocked() *runState {
	st := q.parked
	q.parked = nil
	return st
}

// signal wakes q without blocking: a parked queue gets a goroutine again,
// or a place in its host's line, a running one a wake-up (one already
// pending absorbs it).
func (q *queue) signal() {
	if j, ok := q.wakeUnlined(); ok {
		q.w.limit.line(j)
	}
}

// wakeUnlined is signal, except that a parked queue to wait in its host's
// line is returned, with true, for the caller to line (with the others of
// a fan-out in one pass: hostLimit.line). Until it is lined, the queue
// counts as lined (q.lined): stopping it then leaves it to the goroutine
// its line starts, which finds it stopped and finishes it.
func (q *queue) wakeUnlined() (lineJob, bool) {
	q.signals.Add(1)
	q.mu.Lock()
	st := q.unparkLocked()
	lined := st != nil && q.lineableLocked()
	if lined {
		q.lined, q.idle = true, false
	}
	q.mu.Unlock()
	if st != nil {
		q.woken.Add(1)
		if lined {
			return lineJob{q: q, st: st}, true
		}
		go q.work(st, hostSlot{}, nil)
		return lineJob{}, false
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return lineJob{}, false
}

// lineableLocked reports whether q, woken, waits in its host's line
// without a goroutine: it is deliverable and has no rate to wait for
// (pace) before it takes a slot. q.mu is held.
func (q *queue) lineableLocked() bool {
	w := q.w
	return w.limit.perSecond == 0 && subRate(q.sub, w.cfg.DefaultRate, w.cfg.MaxRate) == 0 && deliverable(q.sub, w.cfg.Clock())
}

// work runs q's delivery from st (nil: from the stored cursor) on the
// calling goroutine, under a context of its own that stop cancels, and
// finishes q unless it parks. slot, when it is one, is a slot of q's host
// handed to q from its line, for its first attempt. A q that parks with
// the slot it delivered with hands it to the next queue in its host's
// line, which the goroutine then runs in turn (handOn). The queues'
// POSTs go through rq, the goroutine's (one of its own when nil).
func (q *queue) work(st *runState, slot hostSlot, rq *requester) {
	if rq == nil {
		rq = &requester{}
		defer rq.close()
	}
	for q != nil {
		q, st, slot = q.workOnce(st, slot, rq)
	}
}

// workOnce is work of q alone; it returns the queue q handed its slot to,
// if any, with that queue's parked state and the slot.
func (q *queue) workOnce(st *runState, slot hostSlot, rq *requester) (*queue, *runState, hostSlot) {
	ctx, cancel, ok := q.begin()
	q.held = slot
	if !ok {
		q.dropSlot()
		q.finish()
		return nil, nil, hostSlot{}
	}
	if st == nil {
		var reason stopReason
		if st, reason = q.start(ctx); st == nil {
			q.exit(cancel, reason)
			return nil, nil, hostSlot{}
		}
	}
	return q.resume(ctx, cancel, st, rq)
}

// begin gives the goroutine about to run q a context that stopLocked and
// the end of the engine's Run cancel; false when q is stopped or the
// engine is stopping.
func (q *queue) begin() (context.Context, context.CancelFunc, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lined = false
	if q.stopped || q.parent.Err() != nil {
		return nil, nil, false
	}
	// not a child of q.parent, which would hold every run as its child
	// under one lock: Run's end cancels the runs (Webhooks.cancelRuns)
	ctx, cancel := context.WithCancel(q.w.runBase)
	q.cancelRun = cancel
	return ctx, cancel, true
}

// resume delivers from st under ctx (from begin), its POSTs through rq,
// until q parks or stops, and returns the queue q handed its slot to as
// it parked, as workOnce.
func (q *queue) resume(ctx context.Context, cancel context.CancelFunc, st *runState, rq *requester) (*queue, *runState, hostSlot) {
	q.mu.Lock()
	q.rq = rq
	q.mu.Unlock()
	reason, kept := q.loop(ctx, st)
	q.exit(cancel, reason)
	if kept.l == nil {
		return nil, nil, hostSlot{}
	}
	return kept.handOn()
}

// run is resume on a goroutine of its own, which goes on with the queues
// q hands its slot on to.
func (q *queue) run(ctx context.Context, cancel context.CancelFunc, st *runState) {
	rq := &requester{}
	defer rq.close()
	if next, nst, slot := q.resume(ctx, cancel, st, rq); next != nil {
		next.work(nst, slot, rq)
	}
}

// exit ends the goroutine's run of q for reason: a parked q waits for its
// next signal (park cleared cancelRun, and a goroutine may run q again
// already); any other reason finishes q.
func (q *queue) exit(cancel context.CancelFunc, reason stopReason) {
	cancel()
	if reason == stopParked { // its slot was given back before it parked
		return
	}
	q.dropSlot()
	q.end(reason)
	q.mu.Lock()
	q.cancelRun, q.rq = nil, nil
	q.mu.Unlock()
	q.finish()
}

// stopLocked ends q: a running goroutine sees its context cancelled and
// finishes q once its attempt in flight is over, cut cfg.Grace from now
// (cutInFlight); a parked q finishes at once. w.mu is held.
func (q *queue) stopLocked() {
	q.mu.Lock()
	q.stopped = true
	cancel := q.cancelRun
	st := q.unparkLocked()
	unlined := q.lined && q.w.limit.unline(q) // else its goroutine was started
	q.lined = false
	q.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	q.cutInFlight()
	if st != nil || unlined {
		q.finishLocked()
	}
}

// dropSlot gives back the slot q holds unused, handed to it from its line
// or kept from its last attempt, if any; q's goroutine only.
func (q *queue) dropSlot() {
	if q.held.l != nil {
		q.held.release()
		q.held = hostSlot{}
	}
}

// takeSlot returns the slot handed to q from its line, or the one kept
// from its last attempt unless others wait for the host (reacquire), else
// waits for one of q's host; q's goroutine only.
func (q *queue) takeSlot(ctx context.Context) (hostSlot, error) {
	s := q.held
	q.held = hostSlot{}
	switch {
	case s.l == nil:
		return q.w.limit.acquire(ctx, q.host)
	case s.reused > 0:
		return s.l.reacquire(ctx, s, q.host)
	}
	return s, nil
}

// doneChan returns a channel closed once q has finished.
func (q *queue) doneChan() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done == nil {
		q.done = make(chan struct{})
		if q.finished {
			close(q.done)
		}
	}
	return q.done
}

// finish removes q from the engine once its delivery has ended for good,
// whether its goroutine ended or it was parked. It runs once.
func (q *queue) finish() {
	q.w.mu.Lock()
	defer q.w.mu.Unlock()
	q.finishLocked()
}

// finishLocked is finish with w.mu held, which makes it run once.
func (q *queue) finishLocked() {
	q.mu.Lock()
	finished := q.finished
	q.mu.Unlock()
	if finished {
		return
	}
	w := q.w
	if w.queues[q.id] == q {
		delete(w.queues, q.id)
	}
	if w.retired[q.id] == q {
		delete(w.retired, q.id)
	}
	w.index.remove(q)
	w.wakes.unwatch(q)
	w.leases.remove(q)
	q.mu.Lock()
	q.finished = true
	if q.done != nil {
		close(q.done)
	}
	q.mu.Unlock()
	w.wg.Done()
}

// cancelRuns cancels the context of every queue's run, once Run's has
// ended: a queue whose run began before sees its context end, and one
// that begins later finds Run's ended (queue.begin).
func (w *Webhooks) cancelRuns() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, qs := range []map[string]*queue{w.queues, w.retired} {
		for _, q := range qs {
			q.mu.Lock()
			cancel := q.cancelRun
			q.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
}
