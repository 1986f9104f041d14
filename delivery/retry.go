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
// back while the host's circuit is open; time held back counts against
// the schedule's MaxElapsed but not against its Attempts, so with no
// MaxElapsed a notification waits for the host to come back.
func (q *queue) deliver(ctx context.Context, rec wire.Record, run *logcache.CoalescedRun) result {
	w := q.w
	sched := w.cfg.Schedule
	first := w.cfg.Clock()
	n := 0
	var last attempt
	for {
		// Take the rates' tokens, a slot of the host's limit, then ask its
		// breaker, so an attempt queued behind a failing one sees the
		// circuit it opened.
		if !q.pace(ctx) {
			return resultAbandoned
		}
		slot, err := q.takeSlot(ctx)
		if err != nil {
			return resultAbandoned
		}
		ok, retryAt, changed := w.breakers.allow(q.host, w.cfg.Clock())
		if !ok {
			slot.release()
			now := w.cfg.Clock()
			if sched.MaxElapsed > 0 && retryAt.Sub(first) > sched.MaxElapsed {
				return q.giveUp(ctx, rec, run, n, attempt{status: last.status, err: circuitError(q.host, n, last)})
			}
			q.update(func(s *SubStats) { s.State = StateCircuitOpen })
			if !sleep(ctx, retryAt.Sub(now), changed, nil) {
				return resultAbandoned
			}
			continue
		}
		sub := q.getSub()
		var out wire.Record
		if run != nil {
			out = run.Record(rec.Channel)
		} else if out, err = w.filters.filteredRecord(rec, sub.Filter); err != nil {
			slot.release()
			return q.deadLetter(ctx, rec, n, attempt{err: err, permanent: true})
		}
		if sub.Format == hub.FormatAtom { // atom.go
			var ok bool
			if out, ok, err = w.atomRecord(out, sub.Topic); err != nil || !ok {
				slot.release()
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
		if a.ok() {
			q.held = slot.kept(a, took, end) // for its next attempt, or the next queue (queue_park.go)
		} else {
			slot.done(a, took, end)
		}
		now := w.cfg.Clock()
		if a.abandoned {
			w.breakers.report(q.host, now, outcomeAbandon)
			return resultAbandoned
		}
		n++
		last = a
		switch {
		case a.ok(), a.gone():
			w.breakers.report(q.host, now, outcomeSuccess)
		case a.hostFailure():
			w.breakers.report(q.host, now, outcomeFailure)
		default:
			w.breakers.report(q.host, now, outcomeAbandon)
		}
		d, more := q.retryDelay(a, n, first, now)
		q.recordAttempt(a, now)
		q.logAttempt(out.Seq, n, a, took, now, d, more) // attemptlog.go
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
			return q.giveUp(ctx, rec, run, n, a)
		}
		if !sleep(ctx, d, nil, nil) {
			return resultAbandoned
		}
	}
}

// retryDelay is how long after a failed attempt, the nth of a
// notification first attempted at first, the next one is made, or more
// false when none is (delivered, gone, permanent or the schedule ran out).
func (q *queue) retryDelay(a attempt, n int, first, now time.Time) (d time.Duration, more bool) {
	if a.ok() || a.gone() || a.permanent {
		return 0, false
	}
	sched := q.w.cfg.Schedule
	d, more = sched.Delay(n, jitter())
	if more && sched.MaxElapsed > 0 && now.Add(d).Sub(first) > sched.MaxElapsed {
		more = false
	}
	return d, more
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
