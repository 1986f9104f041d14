package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
)

// queue delivers one subscription's notifications in log order. Its
// goroutine runs q.run; other goroutines only touch the fields under mu.
type queue struct {
	w      *Webhooks
	id     string
	host   string
	cancel context.CancelFunc
	wake   chan struct{} // a changed subscription; buffered 1
	done   chan struct{} // closed when the queue's goroutine has ended
	lg     *slog.Logger

	mu    sync.Mutex
	gen   uint64 // Webhooks.gen when sub was last set
	sub   hub.Subscription
	stats SubStats
	idle  bool // caught up with the log
}

// stop reasons of a queue's delivery loop.
type stopReason int

const (
	stopCtx       stopReason = iota // stopped, claim lost, or the engine is stopping
	stopExpired                     // lease ended or subscription no longer active
	stopGone                        // 410 Gone or deleted
	stopClaimLost                   // another owner holds the claim
)

func newQueue(w *Webhooks, sub hub.Subscription, gen uint64, cancel context.CancelFunc) *queue {
	q := &queue{
		w:      w,
		id:     sub.ID,
		host:   hostOf(sub.Callback),
		cancel: cancel,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		lg:     w.lg.With("sub", sub.ID, "callback", sub.Callback),
		gen:    gen,
		sub:    sub,
	}
	q.stats = SubStats{ID: sub.ID, Topic: sub.Topic, Callback: sub.Callback, State: StateStarting, Expires: sub.Expires}
	return q
}

// setSub replaces the queue's copy of its subscription and wakes the
// queue when something it uses changed.
func (q *queue) setSub(sub hub.Subscription, gen uint64) {
	q.mu.Lock()
	old := q.sub
	q.sub, q.gen = sub, gen
	q.stats.Expires = sub.Expires
	q.mu.Unlock()
	if old.Expires.Equal(sub.Expires) && old.State == sub.State && old.Secret == sub.Secret {
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) getSub() hub.Subscription {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sub
}

func (q *queue) update(fn func(s *SubStats)) {
	q.mu.Lock()
	fn(&q.stats)
	q.mu.Unlock()
}

// run claims the subscription and delivers while the claim holds, until
// ctx ends, the lease ends or the subscription is gone.
func (q *queue) run(ctx context.Context) {
	key := "deliver/" + q.id
	ttl := q.w.cfg.ClaimTTL
	for ctx.Err() == nil {
		held, err := q.w.store.Claim(ctx, key, q.w.cfg.Owner, ttl)
		if err != nil && ctx.Err() == nil {
			q.lg.Warn("claiming subscription", "err", err)
		}
		if !held {
			q.update(func(s *SubStats) { s.State = StateStandby })
			if !sleep(ctx, ttl/3, nil, nil) {
				return
			}
			continue
		}
		reason := q.whileClaimed(ctx, key, ttl)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := q.w.store.Release(rctx, key, q.w.cfg.Owner); err != nil {
			q.lg.Warn("releasing claim", "err", err)
		}
		cancel()
		switch reason {
		case stopExpired, stopGone:
			q.update(func(s *SubStats) { s.State = StateStopped })
			return
		case stopClaimLost:
			q.update(func(s *SubStats) { s.State = StateStandby })
		}
	}
}

// whileClaimed renews the claim in the background and runs the delivery
// loop until either ends.
func (q *queue) whileClaimed(ctx context.Context, key string, ttl time.Duration) stopReason {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		last := time.Now()
		for sleep(cctx, ttl/3, nil, nil) {
			held, err := q.w.store.Claim(cctx, key, q.w.cfg.Owner, ttl)
			switch {
			case err == nil && held:
				last = time.Now()
				continue
			case err != nil && cctx.Err() != nil:
				return
			case err != nil && time.Since(last) < ttl*2/3:
				q.lg.Warn("renewing claim", "err", err)
				continue
			}
			q.lg.Warn("claim lost; stopping delivery", "err", err)
			close(lost)
			cancel()
			return
		}
	}()
	reason := q.loop(cctx)
	cancel()
	<-renewed
	select {
	case <-lost:
		if ctx.Err() == nil {
			return stopClaimLost
		}
	default:
	}
	return reason
}

// loop delivers from the stored cursor onwards until ctx ends, the lease
// ends or the subscription is gone.
func (q *queue) loop(ctx context.Context) (reason stopReason) {
	w := q.w
	sub, err := w.store.Subscription(ctx, q.id)
	switch {
	case errors.Is(err, hub.ErrNotFound):
		return stopGone
	case err == nil:
		q.mu.Lock()
		if sub.Expires.After(q.sub.Expires) || sub.Expires.Equal(q.sub.Expires) {
			q.sub = sub
		}
		sub = q.sub
		q.mu.Unlock()
	default:
		sub = q.getSub()
	}
	if !deliverable(sub, w.cfg.Clock()) {
		return stopExpired
	}

	channel := logChannel(sub)
	var cursor hub.Cursor
	if !retry(ctx, q.lg, "reading cursor", func() error {
		cursor, err = w.store.Cursor(ctx, q.id)
		if errors.Is(err, hub.ErrNotFound) {
			cursor, err = hub.Cursor{Seq: max(sub.StartSeq, 1) - 1}, nil
		}
		if err != nil {
			return err
		}
		dls, err := w.store.DeadLetters(ctx, q.id)
		if err == nil {
			q.update(func(s *SubStats) { s.DeadLetters = len(dls) })
		}
		return err
	}) {
		return stopCtx
	}
	q.update(func(s *SubStats) { s.Cursor = cursor; s.State = StateActive })
	saver := cursorSaver{q: q, stored: cursor, written: time.Now()}
	defer func() {
		if reason != stopGone {
			saver.flush(ctx, cursor)
		}
	}()

	for {
		sub = q.getSub()
		now := w.cfg.Clock()
		if !deliverable(sub, now) {
			q.lg.Info("lease ended; delivery stopped", "expires", sub.Expires)
			return stopExpired
		}
		changed := w.log.Changed()
		rec, err := w.log.Next(ctx, channel, cursor.Seq+1)
		if errors.Is(err, hub.ErrNotFound) {
			saver.flush(ctx, cursor) // caught up: store where we are before waiting
			q.mu.Lock()
			q.idle = true
			q.mu.Unlock()
			if !q.waitForMore(ctx, changed, sub, now) {
				return stopCtx
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return stopCtx
			}
			q.lg.Warn("reading the log", "err", err)
			if !sleep(ctx, time.Second, nil, nil) {
				return stopCtx
			}
			continue
		}
		q.mu.Lock()
		q.idle = false
		q.mu.Unlock()
		w.noteSeq(rec.Seq)
		if rec.Seq > cursor.Seq+1 {
			q.noteRetention(ctx, cursor.Seq+1)
		}
		if channel == "" && rec.Topic != sub.Topic {
			cursor.Seq = rec.Seq // another topic's record in the shared log
			continue
		}
		switch q.deliver(ctx, rec) {
		case resultAbandoned:
			return stopCtx
		case resultGone:
			q.lg.Info("callback answered 410 Gone; subscription deleted")
			w.forget(q.id)
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := w.store.DeleteSubscription(dctx, q.id); err != nil {
				q.lg.Error("deleting subscription after 410 Gone", "err", err)
			}
			cancel()
			return stopGone
		}
		cursor = hub.Cursor{Seq: rec.Seq, Until: rec.Until}
		q.update(func(s *SubStats) { s.Cursor = cursor })
		if saver.due() {
			saver.flush(ctx, cursor)
		}
		if ctx.Err() != nil {
			return stopCtx
		}
	}
}

// waitForMore waits for an append to the log, a changed subscription, the
// end of the lease, a safety tick or the end of ctx. It reports whether to
// go on.
func (q *queue) waitForMore(ctx context.Context, changed <-chan struct{}, sub hub.Subscription, now time.Time) bool {
	wait := q.w.cfg.Reconcile
	if !sub.Expires.IsZero() {
		wait = min(wait, sub.Expires.Sub(now))
	}
	return sleep(ctx, wait, changed, q.wake)
}

// noteRetention warns when the records from want on were removed by
// retention before this subscription received them.
func (q *queue) noteRetention(ctx context.Context, want uint64) {
	first, _, err := q.w.log.Bounds(ctx)
	if err == nil && first > want {
		q.lg.Warn("records removed by retention before delivery; skipping them",
			"from", want, "to", first-1)
	}
}

// retry calls fn until it succeeds, backing off from 100ms to 5s, and
// reports false when ctx ended first.
func retry(ctx context.Context, lg *slog.Logger, what string, fn func() error) bool {
	wait := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		lg.Warn(what, "err", err, "retry_in", wait)
		if !sleep(ctx, wait, nil, nil) {
			return false
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// sleep waits d, or until a or b is closed or receives; it returns false
// when ctx ended first. Nil channels are never ready.
func sleep(ctx context.Context, d time.Duration, a, b <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-a:
	case <-b:
	}
	return true
}

// jitter returns a random number in [0, 1) for Schedule.Delay.
func jitter() float64 { return rand.Float64() }

// errCircuitOpen is matched by the reason of a notification given up
// because its callback host's circuit stayed open.
var errCircuitOpen = errors.New("circuit open")

func circuitError(host string, attempts int, last attempt) error {
	if attempts == 0 {
		return fmt.Errorf("delivery: %w for host %s", errCircuitOpen, host)
	}
	return fmt.Errorf("delivery: %w for host %s after %d attempts; last: %s", errCircuitOpen, host, attempts, last.reason())
}
