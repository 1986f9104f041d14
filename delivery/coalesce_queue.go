package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// Coalesced catch-up of a webhook subscription (Config.Coalesce).
//
// Before delivering a change notification, a queue whose subscription
// coalesces checks its backlog: when the log's last sequence is more than
// the threshold past the record, it counts the channel's records from the
// record on (headers only, stopping past the threshold). Past it, the queue
// is catching up: it delivers the run the record starts, coalesced
// (logcache.CoalesceLog, with the subscription's filter applied to each
// notification first), as one POST with Rshub-Seq (and the webhook-id's
// sequence) the run's last sequence, and moves its cursor there only after
// a 2xx. Retries resend the same body. When retries run out, every record
// of the run gets its own dead letter, so that each can be redriven as
// stored. A queue stops catching up when a run reaches the end of the log;
// a record that does not coalesce, and a run of one record, are delivered
// as they are. Subscriptions stored without a channel never coalesce.

// catchUp is a queue's coalescing state; queue goroutine only.
type catchUp struct {
	on bool // the backlog was found over the threshold
	// quietUntil: no backlog count and no run before this sequence (a
	// count found the backlog under the threshold up to it, or a run did
	// not coalesce).
	quietUntil uint64
}

// coalesceThreshold is the backlog over which sub coalesces; 0: never.
func (w *Webhooks) coalesceThreshold(sub hub.Subscription) int {
	t := max(w.cfg.Coalesce.Threshold, 0)
	switch sub.Coalesce {
	case wire.CoalesceOff:
		return 0
	case wire.CoalesceOn:
		if t == 0 {
			return DefaultCoalesceThreshold
		}
	}
	return t
}

// runFor returns the coalesced run that the queue delivers instead of rec,
// or nil to deliver rec as it is.
func (q *queue) runFor(ctx context.Context, cu *catchUp, sub hub.Subscription, channel string, rec wire.Record) (*logcache.CoalescedRun, error) {
	threshold := q.w.coalesceThreshold(sub)
	if threshold <= 0 || channel == "" || !logcache.Coalescible(rec) || rec.Seq < cu.quietUntil {
		return nil, nil
	}
	if !cu.on {
		over, upTo, err := q.backlogOver(ctx, channel, rec.Seq, threshold)
		if err != nil {
			return nil, err
		}
		if !over {
			cu.quietUntil = upTo + 1
			return nil, nil
		}
		cu.on = true
		q.logger.Info("backlog over the coalescing threshold; catching up with coalesced notifications", "seq", rec.Seq, "threshold", threshold)
	}
	run, err := logcache.CoalesceLog(ctx, q.w.reads, channel, rec.Seq, logcache.CoalesceOptions{MaxEntries: q.w.cfg.Coalesce.MaxEntries, Filter: sub.Filter})
	if errors.Is(err, logcache.ErrNotCoalescible) {
		q.logger.Warn("run delivered one notification at a time", "from", run.First, "to", run.Last, "err", err)
		cu.quietUntil = run.Last + 1
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if run.End {
		cu.on = false // caught up with the log as it was: count again next time
	}
	if run.Records <= 1 {
		return nil, nil
	}
	return &run, nil
}

// backlogOver reports whether channel has more than threshold records from
// seq on, and up to which sequence it looked.
func (q *queue) backlogOver(ctx context.Context, channel string, seq uint64, threshold int) (bool, uint64, error) {
	_, last, err := q.w.log.Bounds(ctx)
	if err != nil {
		return false, 0, fmt.Errorf("delivery: backlog: %w", err)
	}
	if last < seq || last-seq < uint64(threshold) {
		return false, last, nil // fewer sequences than the threshold, whatever their channel
	}
	n := 0
	err = logcache.ReadRange(ctx, q.w.reads, channel, seq, last, true, func(wire.Record) error {
		if n++; n > threshold {
			return errRunEnd
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRunEnd) {
		return false, 0, fmt.Errorf("delivery: backlog of %s: %w", channel, err)
	}
	return n > threshold, last, nil
}

// deadLetterRun stores a dead letter for every record of run after n
// attempts of its coalesced delivery, the last being last. The cursor
// moves on only once they are all stored. A log read that fails is retried
// from the first record without its dead letter, like every read of the
// queue, until it works or the queue stops.
func (q *queue) deadLetterRun(ctx context.Context, channel string, run *logcache.CoalescedRun, n int, last attempt) result {
	w := q.w
	now := w.cfg.Clock()
	reason := fmt.Sprintf("coalesced delivery of %d notifications (%d to %d): %s", run.Records, run.First, run.Last, last.reason())
	stored, from := 0, run.First
	defer func() {
		if stored > 0 {
			q.update(func(s *SubStats) { s.DeadLetters += stored })
		}
	}()
	for from <= run.Last {
		err := logcache.ReadRange(ctx, w.log, channel, from, run.Last, true, func(rec wire.Record) error {
			d := hub.DeadLetter{
				ID: deadLetterID(rec.Seq), SubID: q.id, Seq: rec.Seq, Attempts: n,
				LastStatus: last.status, Reason: reason, Failed: now,
			}
			if !q.h.Do(ctx, opDeadLetter, func() error { return w.store.AddDeadLetter(ctx, d) }) {
				return ctx.Err()
			}
			stored, from = stored+1, rec.Seq+1
			w.obs.Attempted("dead_letter", 0, 0)
			return nil
		})
		if q.h.Report(ctx, opLog, err) == nil {
			break
		}
		if !q.h.Backoff(ctx, opLog, 0) {
			return resultAbandoned
		}
	}
	q.logger.Warn("coalesced delivery given up; dead letters stored", "from", run.First, "to", run.Last, "records", stored, "attempts", n, "reason", last.reason())
	return resultDeadLettered
}
