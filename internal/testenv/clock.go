package testenv

import (
	"sync/atomic"
	"time"
)

// Clock is real time shifted by an offset that a test advances, for the
// code under test to read through a Now func: time goes on as usual, and
// jumps when the test says so. It is safe for concurrent use.
type Clock struct{ offset atomic.Int64 }

// Now returns the current time plus the offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
