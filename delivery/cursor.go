package delivery

import (
	"context"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
)

// DefaultCursorFlush is how often, at most, a busy queue stores its cursor.
const DefaultCursorFlush = 100 * time.Millisecond

// cursorSaver stores a queue's cursor when the queue catches up, when it
// stops, and otherwise at most every Config.CursorFlush while it is busy:
// one store write per burst instead of one per delivery. A hub process that
// dies redelivers at most what it delivered since the last write, which
// at-least-once delivery allows; a graceful stop redelivers nothing.
//
// A write that fails does not hold delivery up: the queue goes on and the
// write is tried again after a backoff, with the cursor reached by then.
type cursorSaver struct {
	q        *queue
	stored   hub.Cursor // last cursor written
	written  time.Time
	failures int       // writes failed in a row
	retryAt  time.Time // no write before this after a failure
}

// due reports whether a busy queue should write its cursor now.
func (c *cursorSaver) due() bool {
	if c.failures > 0 {
		return !time.Now().Before(c.retryAt)
	}
	every := c.q.w.cfg.CursorFlush
	return every <= 0 || time.Since(c.written) >= every
}

// retryIn returns how long until a failed write of cursor is tried again,
// 0 when none is pending.
func (c *cursorSaver) retryIn(cursor hub.Cursor) time.Duration {
	if c.failures == 0 || cursor == c.stored {
		return 0
	}
	return max(time.Until(c.retryAt), time.Millisecond)
}

// flush makes one attempt at writing cursor when it moved since the last
// write and no failed write is waiting for its backoff. The write is made
// even when ctx has ended (a 2xx let through by the grace period must not be
// redelivered); losing it only means notifications are delivered again.
func (c *cursorSaver) flush(ctx context.Context, cursor hub.Cursor) {
	if cursor == c.stored || (c.failures > 0 && time.Now().Before(c.retryAt)) {
		return
	}
	q := c.q
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if q.h.Report(ctx, opCursorWrite, q.w.store.PutCursor(pctx, q.id, cursor)) != nil {
		c.failures++
		c.retryAt = time.Now().Add(loophealth.Delay(c.failures))
		return
	}
	c.stored, c.written, c.failures = cursor, time.Now(), 0
}

// final writes cursor as the queue stops, retrying for a few seconds.
func (c *cursorSaver) final(ctx context.Context, cursor hub.Cursor) {
	if cursor == c.stored {
		return
	}
	q := c.q
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if !q.h.Do(pctx, opCursorWrite, func() error { return q.w.store.PutCursor(pctx, q.id, cursor) }) {
		q.logger.Warn("cursor not stored; another hub taking the subscription over may deliver again", "seq", cursor.Seq)
		return
	}
	c.stored, c.written, c.failures = cursor, time.Now(), 0
}
