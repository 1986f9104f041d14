package delivery

// health is the same in delivery, hub/logcache and hub/pull (each keeps
// the methods it uses): the three packages' loops share its behaviour and
// no package below them holds it yet.

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Retry delays of a loop whose log or store calls fail: capped exponential
// backoff with jitter, from about minRetry to maxRetry.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = 5 * time.Second
)

// health follows the operations of a long-running loop that fail against
// the log or the store (a lost connection, a restarting server): it logs
// once when an operation starts failing and once when it works again, never
// per attempt, paces the retries, and tells whether the loop is stalled and
// since when. Operations are named, so that one dependency working does not
// hide another one failing. It is safe for concurrent use.
type health struct {
	lg      *slog.Logger
	nfail   atomic.Int32 // len(failing), read without the lock on the hot path
	mu      sync.Mutex
	failing map[string]*failure // by operation
}

// failure is an operation failing since a time.
type failure struct {
	since    time.Time
	err      error
	attempts int
}

func newHealth(lg *slog.Logger) *health {
	return &health{lg: lg, failing: map[string]*failure{}}
}

// fail records that op failed with err and returns how many times in a row
// it has. The first failure of a run is logged.
func (h *health) fail(op string, err error) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.failing[op]
	if f == nil {
		f = &failure{since: time.Now()}
		h.failing[op] = f
		h.nfail.Store(int32(len(h.failing)))
		h.lg.Warn(op+" failed; retrying until it works", "err", err)
	}
	f.err = err
	f.attempts++
	return f.attempts
}

// ok records that op worked, logging the recovery when it had been failing.
func (h *health) ok(op string) {
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
	h.lg.Info(op+" works again", "failed_for", time.Since(f.since).Round(time.Millisecond), "attempts", f.attempts, "last_err", f.err)
}

// state reports whether no operation is failing; otherwise when the oldest
// failure began and its latest error.
func (h *health) state() (ok bool, since time.Time, err error) {
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

// retry records that op failed with err and waits before the next attempt,
// at most limit when limit > 0. It reports false when ctx ended first.
func (h *health) retry(ctx context.Context, op string, err error, limit time.Duration) bool {
	d := retryDelay(h.fail(op, err))
	if limit > 0 {
		d = min(d, limit)
	}
	return waitFor(ctx, d)
}

// do calls fn until it works, waiting between attempts, and reports false
// when ctx ended first.
func (h *health) do(ctx context.Context, op string, fn func() error) bool {
	for {
		err := fn()
		if err == nil {
			h.ok(op)
			return true
		}
		if ctx.Err() != nil || !h.retry(ctx, op, err, 0) {
			return false
		}
	}
}

// waitFor waits d and reports false when ctx ended first.
func waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryDelay is the wait before retrying after the n-th failure in a row:
// minRetry doubled with each failure up to maxRetry, of which a random half
// is taken off so that many loops failing together do not retry together.
func retryDelay(n int) time.Duration {
	d := maxRetry
	if n < 20 {
		d = min(minRetry<<max(n-1, 0), maxRetry)
	}
	return d/2 + rand.N(d/2+1)
}
