package delivery

import (
	"context"
	"time"

	"github.com/rshub/rshub/hub"
)

// DefaultCursorFlush is how often, at most, a busy queue stores its cursor.
const DefaultCursorFlush = 100 * time.Millisecond

// cursorSaver stores a queue's cursor when the queue catches up, when it
// stops, and otherwise at most every Config.CursorFlush while it is busy:
// one store write per burst instead of one per delivery. A hub process that
// dies redelivers at most what it delivered since the last write, which
// at-least-once delivery allows; a graceful stop redelivers nothing.
type cursorSaver struct {
	q       *queue
	stored  hub.Cursor // last cursor written
	written time.Time
}

// due reports whether a busy queue should write its cursor now.
func (c *cursorSaver) due() bool {
	every := c.q.w.cfg.CursorFlush
	return every <= 0 || time.Since(c.written) >= every
}

// flush writes cursor when it moved since the last write. The write is made
// even when ctx has ended (a 2xx let through by the grace period must not be
// redelivered); losing it only means notifications are delivered again.
func (c *cursorSaver) flush(ctx context.Context, cursor hub.Cursor) {
	if cursor == c.stored {
		return
	}
	q := c.q
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if !retry(pctx, q.lg, "storing cursor", func() error { return q.w.store.PutCursor(pctx, q.id, cursor) }) {
		q.lg.Warn("cursor not stored; notifications may be delivered again", "seq", cursor.Seq)
		return
	}
	c.stored, c.written = cursor, time.Now()
}
