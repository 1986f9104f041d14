// Package backoff waits between attempts of an optimistic update that lost
// a race: a random wait that grows with the attempt, cut short by the
// context.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Wait sleeps a random duration below 1 ms × 2^attempt (attempt capped at
// 6, so below 64 ms), or until ctx ends, whose error it then returns.
func Wait(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(max(attempt, 0), 6)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
