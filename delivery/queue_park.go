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
// still counts in Webhooks.wg until it finishes, and cancelling its context
// finishes a parked queue at once (stopParked).

// park leaves st in q and reports true when the goroutine may end now;
// false when a wake-up is already pending or ctx has ended, so that the
// loop goes on waiting as it would without parking.
func (q *queue) park(ctx context.Context, st *runState, sub hub.Subscription, now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ctx.Err() != nil || len(q.wake) > 0 {
		return false
	}
	if !sub.Expires.IsZero() {
		d := sub.Expires.Sub(now)
		if d <= 0 {
			return false
		}
		// the lease's end wakes it; the timer is kept for the next park
		if q.timer == nil {
			q.timer = time.AfterFunc(d, q.signal)
		} else {
			q.timer.Reset(d)
		}
	}
	q.parked = st
	return true
}

// unparkLocked takes q's parked state, if any, and stops its timer; q.mu
// is held. A wake-up of a timer that fired meanwhile is harmless: the
// queue reads the log and parks again.
func (q *queue) unparkLocked() *runState {
	st := q.parked
	q.parked = nil
	if st != nil && q.timer != nil {
		q.timer.Stop()
	}
	return st
}

// signal wakes q without blocking: a parked queue gets a goroutine again,
// a running one a wake-up (one already pending absorbs it).
func (q *queue) signal() {
	q.signals.Add(1)
	q.mu.Lock()
	st := q.unparkLocked()
	q.mu.Unlock()
	if st != nil {
		q.woken.Add(1)
		go q.work(st)
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// work runs q's delivery from st (nil: from the stored cursor) on the
// calling goroutine, and finishes q unless it parked.
func (q *queue) work(st *runState) {
	if q.ctx.Err() == nil && q.run(q.ctx, st) {
		return
	}
	q.finish()
}

// stopParked finishes q when it is parked as its context ends; a running
// queue finishes by itself, its POST in flight cut after the grace.
func (q *queue) stopParked() {
	q.cutInFlight()
	q.mu.Lock()
	st := q.unparkLocked()
	q.mu.Unlock()
	if st != nil {
		q.finish()
	}
}

// finish removes q from the engine once its delivery has ended for good,
// whether its goroutine ended or it was parked. It runs once.
func (q *queue) finish() {
	q.finished.Do(func() {
		w := q.w
		w.mu.Lock()
		if w.queues[q.id] == q {
			delete(w.queues, q.id)
		}
		if w.retired[q.id] == q {
			delete(w.retired, q.id)
		}
		w.mu.Unlock()
		w.index.remove(q)
		w.wakes.unwatch(q)
		q.stopHook()
		q.cancel()
		close(q.done)
		w.wg.Done()
	})
}
