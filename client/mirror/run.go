package mirror

import (
	"context"
	"errors"
	"time"
)

// retryPause is the pause after the n-th consecutive failure (1-based):
// 500 ms doubling up to 30 s.
func retryPause(n int) time.Duration {
	d := 500 * time.Millisecond
	for i := 1; i < n && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retry calls f until it succeeds or ctx ends, pausing between failures.
func (m *Mirror) retry(ctx context.Context, what string, f func() error) error {
	for n := 1; ; n++ {
		err := f()
		var pe permanent
		if err == nil || ctx.Err() != nil || errors.As(err, &pe) {
			return err
		}
		pause := retryPause(n)
		m.emit(Event{Kind: EventWarning, Message: what + " failed, retrying in " + pause.String() + ": " + err.Error()})
		if !sleep(ctx, pause) {
			return ctx.Err()
		}
	}
}

// ApplyRetrying applies u, retrying until it succeeds or ctx ends.
func (m *Mirror) ApplyRetrying(ctx context.Context, u Update) error {
	return m.retry(ctx, "applying a notification", func() error { return m.Apply(ctx, u) })
}

// Run starts the mirror (baseline, catch-up; retried until they succeed),
// then applies the updates from the channel in order and, every resync
// when positive, catches up from the hub's Change Lists, until ctx ends.
func (m *Mirror) Run(ctx context.Context, updates <-chan Update, resync time.Duration) error {
	if err := m.retry(ctx, "start-up catch-up", func() error { return m.Start(ctx) }); err != nil {
		return err
	}
	var tick <-chan time.Time
	if resync > 0 {
		t := time.NewTicker(resync)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-updates:
			if err := m.ApplyRetrying(ctx, u); err != nil {
				return err
			}
		case <-tick:
			if err := m.Sync(ctx); err != nil && ctx.Err() == nil {
				m.emit(Event{Kind: EventWarning, Message: "periodic catch-up failed: " + err.Error()})
			}
		}
	}
}
