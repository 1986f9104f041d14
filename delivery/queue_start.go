package delivery

import "github.com/rshub/rshub/hub"

// Starting queues. A hub restarting with many subscriptions starts a queue
// for each at once, and each first reads its subscription, cursor and dead
// letters from the store (queue.start). Started all at once, that is a
// goroutine and store requests in flight for every subscription: stacks and
// requests pile up until requests time out and are retried, and the more
// subscriptions, the longer each waits. Instead new queues wait in a FIFO
// that at most startParallel starters work through; a queue that has read
// its state delivers on a goroutine of its own, so a starter is never held
// by a queue's backlog.

// startParallel bounds the queues reading their state at once.
const startParallel = 64

// startLocked starts sub's queue; w.mu is held and Run is running. When
// an earlier queue of the same subscription is still finishing (an attempt
// in its grace period), the new one waits for it, so that two queues never
// deliver or move the cursor of one subscription at once. listed, when sub
// comes from a listing of its shard just taken, is what that listing read
// of its state, if anything (start_state.go).
func (w *Webhooks) startLocked(sub hub.Subscription, listed *startState) {
	q := newQueue(w, sub, w.gen, w.runCtx, listed)
	prev := w.retired[sub.ID]
	delete(w.retired, sub.ID)
	w.queues[sub.ID] = q
	w.wg.Add(1) // until q finishes, parked or not
	if prev == nil {
		w.enqueueStartLocked(q)
		return
	}
	prevDone := prev.doneChan()
	go func() {
		<-prevDone // ends within Grace once stopped
		q.work(nil, hostSlot{}, nil)
	}()
}

// enqueueStartLocked has q started by a starter; w.mu is held.
func (w *Webhooks) enqueueStartLocked(q *queue) {
	w.toStart = append(w.toStart, q)
	if w.starters < startParallel {
		w.starters++
		go w.starter()
	}
}

// starter starts the queues of the FIFO until it is empty.
func (w *Webhooks) starter() {
	for {
		w.mu.Lock()
		if len(w.toStart) == 0 {
			w.starters--
			w.toStart = nil // let go of the drained backing array
			w.mu.Unlock()
			return
		}
		q := w.toStart[0]
		w.toStart[0] = nil
		w.toStart = w.toStart[1:]
		w.mu.Unlock()
		w.startOne(q)
	}
}

// startOne reads q's state and, unless q stops first, leaves it delivering
// on a goroutine of its own.
func (w *Webhooks) startOne(q *queue) {
	ctx, cancel, ok := q.begin()
	if !ok {
		q.finish()
		return
	}
	st, reason := q.start(ctx)
	if st == nil {
		q.exit(cancel, reason)
		return
	}
	go q.run(ctx, cancel, st)
}
