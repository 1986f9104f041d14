// Package loophealth paces and reports the long-running loops of the hub
// (webhook queues, the WebSocket dispatcher, the log cache, pull mode)
// while the log or the store they call is failing: capped exponential
// backoff with jitter, one log line when an operation starts failing and
// one when it works again, and whether the loop is stalled and since when.
package loophealth

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Retry delays of a loop whose log or store calls fail: capped exponential
// backoff with jitter, from about MinRetry to MaxRetry.
const (
	MinRetry = 50 * time.Millisecond
	MaxRetry = 5 * time.Second
	// EngineRetry caps the delays of a loop of which a process runs one
	// (a log follower, a dispatcher, a reconcile, a heartbeat): its
	// retries cost a recovering dependency little next to those of one
	// queue per subscription, and how soon it retries is how soon the hub
	// is ready again once the dependency answers.
	EngineRetry = time.Second
)

// Tracker follows the operations of a long-running loop that fail against
// the log or the store (a lost connection, a restarting server): it logs
// once when an operation starts failing and once when it works again, never
// per attempt, paces the retries, and tells whether the loop is stalled and
// since when. Operations are named, so that one dependency working does not
// hide another one failing. It is safe for concurrent use.
type Tracker struct {
	lg      *slog.Logger
	nfail   atomic.Int32 // len(failing), read without the lock on the hot path
	mu      sync.Mutex
	failing map[string]*failure // by operation; nil until one fails (a loop per subscription mostly never does)
	watch   func(stalled bool)  // told when the loop stalls and recovers; see Watch
}

// failure is an operation failing since a time.
type failure struct {
	since    time.Time
	err      error
	attempts int
}

// New returns a Tracker that logs to lg.
func New(lg *slog.Logger) *Tracker {
	return &Tracker{lg: lg}
}

// Init readies a Tracker held by value, as New would, to log to lg; call
// it before the Tracker is used.
func (h *Tracker) Init(lg *slog.Logger) { h.lg = lg }

// Watch has fn called, under the Tracker's lock, whenever the loop goes
// from no operation failing to one failing (true) and back (false), so that
// a caller can keep an index of stalled loops instead of polling each. Call
// it before the Tracker is used; fn must not call the Tracker.
func (h *Tracker) Watch(fn func(stalled bool)) { h.watch = fn }

// Report records the outcome of one contact of op with its dependency, in
// both directions, and returns err: a failure when err is not nil (the
// first of a run is logged), a recovery when it is nil (logged when op had
// been failing). Each contact reports through this one call, so the
// contact that fails and the one that works again are the same line of
// code, and no path can leave a failure recorded after the dependency
// answered. ctx is the caller's context: an error that comes with its end
// is the caller stopping, not the dependency failing, and is not recorded.
func (h *Tracker) Report(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		h.ok(op)
	case ctx.Err() == nil:
		h.fail(op, err)
	}
	return err
}

// fail records that op failed with err. The first failure of a run is
// logged.
func (h *Tracker) fail(op string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.failing[op]
	if f == nil {
		f = &failure{since: time.Now()}
		if h.failing == nil {
			h.failing = map[string]*failure{}
		}
		h.failing[op] = f
		h.nfail.Store(int32(len(h.failing)))
		if len(h.failing) == 1 && h.watch != nil {
			h.watch(true)
		}
		h.lg.Warn(op+" failed; retrying until it works", "err", err)
	}
	f.err = err
	f.attempts++
}

// ok records that op worked, logging the recovery when it had been failing.
func (h *Tracker) ok(op string) {
	if h.nfail.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.failing[op]
	if f == nil {
		return
	}
	delete(h.failing, op)
	h.nfail.Store(int32(len(h.failing)))
	if len(h.failing) == 0 && h.watch != nil {
		h.watch(false)
	}
	h.lg.Info(op+" works again", "failed_for", time.Since(f.since).Round(time.Millisecond), "attempts", f.attempts, "last_err", f.err)
}

// State reports whether no operation is failing; otherwise when the oldest
// failure began and its latest error.
func (h *Tracker) State() (ok bool, since time.Time, err error) {
	if h.nfail.Load() == 0 {
		return true, time.Time{}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.failing {
		if since.IsZero() || f.since.Before(since) {
			since, err = f.since, f.err
		}
	}
	return since.IsZero(), since, err
}

// Backoff waits RetryIn(op, limit) before the next attempt at op, and
// reports false when ctx has ended or ends first.
func (h *Tracker) Backoff(ctx context.Context, op string, limit time.Duration) bool {
	return ctx.Err() == nil && Wait(ctx, h.RetryIn(op, limit))
}

// RetryIn is the wait before the next attempt at op: 0 when op is not
// failing, else Delay of the attempts in a row Report recorded as failed,
// at most limit when limit > 0.
func (h *Tracker) RetryIn(op string, limit time.Duration) time.Duration {
	h.mu.Lock()
	f := h.failing[op]
	n := 0
	if f != nil {
		n = f.attempts
	}
	h.mu.Unlock()
	if f == nil {
		return 0
	}
	if d := Delay(n); limit <= 0 || d < limit {
		return d
	}
	return limit
}

// Do calls fn, reporting each outcome, until it works, waiting between
// attempts; it reports false when ctx ended first.
func (h *Tracker) Do(ctx context.Context, op string, fn func() error) bool {
	for h.Report(ctx, op, fn()) != nil {
		if !h.Backoff(ctx, op, 0) {
			return false
		}
	}
	return true
}

// Wait waits d and reports false when ctx ended first.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Delay is the wait before retrying after the n-th failure in a row:
// MinRetry doubled with each failure up to MaxRetry, of which a random half
// is taken off so that many loops failing together do not retry together.
func Delay(n int) time.Duration {
	d := MaxRetry
	if n < 20 {
		d = min(MinRetry<<max(n-1, 0), MaxRetry)
	}
	return d/2 + rand.N(d/2+1)
}

// Worst combines the State of two loops: stalled when either is, since the
// earlier stall.
func Worst(ok bool, since time.Time, err error, ok2 bool, since2 time.Time, err2 error) (bool, time.Time, error) {
	if ok2 || (!ok && since.Before(since2)) {
		return ok, since, err
	}
	return ok2, since2, err2
}
