package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// result is how the delivery of one record to one subscription ended.
type result int

const (
	resultDelivered    result = iota // a 2xx: move the cursor
	resultDeadLettered               // retries ran out; a dead letter was stored: move the cursor
	resultGone                       // 410 Gone: end the subscription
	resultAbandoned                  // the queue is stopping: leave the cursor
)

// deliver POSTs rec, filtered for the subscription (filter.go), until the
// callback accepts it, answers 410, the schedule is exhausted (then it
// stores a dead letter, of the stored sequence) or ctx ends. With a run
// (coalesce_queue.go), it POSTs the run's coalesced body instead, the same
// on every attempt, and an exhausted schedule stores a dead letter for
// each record of the run.
// Attempts wait for their tokens of the subscription's and the host's
// rates (rate.go), then for a slot of the host's concurrency limit, and are held
// back while the callback's or the host's circuit is open (isolate.go);
// time held back counts against the schedule's MaxElapsed but not against
// its Attempts, so with no MaxElapsed a notification waits for the
// callback to come back. After a failed attempt the queue waits until the
// time the attempt log names as its next retry (nextAttempt).
func (q *queue) deliver(ctx context.Context, rec wire.Record, run *logcache.CoalescedRun) result {
	w := q.w
	sched := w.cfg.Schedule
	first := w.cfg.Clock()
	n := 0
	var last attempt
	for {
		// Take the rates' tokens, a slot of the host's limit, then ask the
		// breakers, so an attempt queued behind a failing one sees the
		// circuit it opened.
		if !q.pace(ctx) {
			return resultAbandoned
		}
		slot, err := q.takeSlot(ctx)
		if err != nil {
			return resultAbandoned
		}
		sub := q.getSub()
		ok, retryAt, changed, open := w.admit(q.host, q.callback, w.cfg.Clock())
		if !ok {
			slot.release()
			now := w.cfg.Clock()
			if sched.MaxElapsed > 0 && retryAt.Sub(first) > sched.MaxElapsed {
				return q.giveUp(ctx, rec, run, n, attempt{status: last.status, err: circuitError(open, n, last)})
			}
			q.update(func(s *SubStats) { s.State = StateCircuitOpen })
			if !sleep(ctx, retryAt.Sub(now), changed, nil) {
				return resultAbandoned
			}
			continue
		}
		var out wire.Record
		if run != nil {
			out = run.Record(rec.Channel)
		} else if out, err = w.filters.filteredRecord(rec, sub.Filter); err != nil {
			slot.release()
			w.unadmit(q.host, q.callback, w.cfg.Clock())
			return q.deadLetter(ctx, rec, n, attempt{err: err, permanent: true})
		}
		if sub.Format == hub.FormatAtom { // atom.go
			var ok bool
			if out, ok, err = w.atomRecord(out, sub.Topic); err != nil || !ok {
				slot.release()
				w.unadmit(q.host, q.callback, w.cfg.Clock())
				if err != nil {
					return q.giveUp(ctx, rec, run, n, attempt{err: err, permanent: true})
				}
				return resultDelivered // not a change notification: skipped
			}
		}
		t0 := time.Now()
		a := w.post(ctx, q, &q.target, sub, out)
		end := time.Now()
		took := end.Sub(t0)
		now := w.cfg.Clock()
		seen := w.settle(q.host, q.callback, a, now) // isolate.go
		if a.ok() {
			q.held = slot.kept(seen, took, end) // for its next attempt, or the next queue (queue_park.go)
		} else {
			slot.done(seen, took, end)
		}
		if a.abandoned {
			return resultAbandoned
		}
		n++
		last = a
		at, more, held := q.nextAttempt(a, n, first, now)
		q.recordAttempt(a, now)
		q.logAttempt(out.Seq, n, a, took, now, at, more) // attemptlog.go
		if a.ok() {
			w.obs.Attempted("delivered", took, end.Sub(rec.Received))
			return resultDelivered
		}
		if a.gone() {
			w.obs.Attempted("gone", took, 0)
			return resultGone
		}
		w.obs.Attempted("failed", took, 0)
		q.logger.Debug("delivery failed", "seq", rec.Seq, "attempt", n, "reason", a.reason())
		if !more {
			if held != "" {
				return q.giveUp(ctx, rec, run, n, attempt{status: a.status, err: circuitError(held, n, a)})
			}
			return q.giveUp(ctx, rec, run, n, a)
		}
		if !sleep(ctx, at.Sub(now), nil, nil) {
			return resultAbandoned
		}
	}
}

// nextAttempt is when the next attempt after a failed one, the nth of a
// notification first attempted at first, made at now, is made: after the
// schedule's delay and the callback's Retry-After, once the circuits of
// the callback and its host let it (held names the one that holds it,
// "" for none), and the rates and the host's pause do; or more false when
// none is (delivered, gone, permanent, the schedule ran out or its
// MaxElapsed would pass).
func (q *queue) nextAttempt(a attempt, n int, first, now time.Time) (at time.Time, more bool, held string) {
	if a.ok() || a.gone() || a.permanent {
		return time.Time{}, false, ""
	}
	sched := q.w.cfg.Schedule
	d, more := sched.Delay(n, jitter())
	if !more {
		return time.Time{}, false, ""
	}
	at, held = q.w.heldUntil(q.host, q.callback, now.Add(max(d, a.retryAfter)), now)
	real := time.Now().Add(at.Sub(now)) // the rates run on real time, Config.Clock may not
	at = at.Add(q.readyAt(real).Sub(real))
	if sched.MaxElapsed > 0 && at.Sub(first) > sched.MaxElapsed {
		return time.Time{}, false, held
	}
	return at, true, ""
}

// recordAttempt updates the subscription's statistics after an attempt.
func (q *queue) recordAttempt(a attempt, now time.Time) {
	q.update(func(s *SubStats) {
		s.LastAttempt = now
		s.LastStatus = a.status
		if a.ok() || a.gone() {
			s.LastSuccess = now
			s.ConsecutiveFailures = 0
			s.LastError = ""
			s.State = StateActive
			return
		}
		s.ConsecutiveFailures++
		s.LastError = a.reason()
		s.State = StateFailing
	})
}

// giveUp stores the dead letters of rec, or of every record of run when
// it is not nil.
func (q *queue) giveUp(ctx context.Context, rec wire.Record, run *logcache.CoalescedRun, n int, last attempt) result {
	if run != nil {
		return q.deadLetterRun(ctx, rec.Channel, run, n, last)
	}
	return q.deadLetter(ctx, rec, n, last)
}

// deadLetter stores rec as a dead letter of the subscription after n
// attempts, the last one being last. The cursor moves on only once the
// dead letter is stored; when ctx ends first the record stays pending.
func (q *queue) deadLetter(ctx context.Context, rec wire.Record, n int, last attempt) result {
	w := q.w
	now := w.cfg.Clock()
	d := hub.DeadLetter{
		ID:         deadLetterID(rec.Seq),
		SubID:      q.id,
		Seq:        rec.Seq,
		Attempts:   n,
		LastStatus: last.status,
		Reason:     last.reason(),
		Failed:     now,
	}
	if !q.h.Do(ctx, opDeadLetter, func() error { return w.store.AddDeadLetter(ctx, d) }) {
		return resultAbandoned
	}
	q.logger.Warn("delivery given up; dead letter stored", "seq", rec.Seq, "attempts", n, "reason", d.Reason)
	q.update(func(s *SubStats) { s.DeadLetters++ })
	w.obs.Attempted("dead_letter", 0, 0)
	return resultDeadLettered
}

// deadLetterID is the ID of the dead letter of the record seq: one per
// record and subscription, ordered like the log.
func deadLetterID(seq uint64) string { return fmt.Sprintf("%020d", seq) }
