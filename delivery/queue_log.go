package delivery

import (
	"context"
	"log/slog"

	"github.com/rshub/rshub/wire"
)

// queueLog is the slog.Handler of a queue's logger: the engine's handler
// with the queue's "sub" and "callback" attributes, added to each record as
// it is logged instead of preformatted when the queue starts. A queue logs
// rarely and a hub holds many, so the attributes cost nothing until used
// (the queue holds the Logger wrapping it: no allocation per queue). A
// record comes out as it would from Logger.With("sub", …, "callback", …).
type queueLog struct{ q *queue }

func (l queueLog) base() slog.Handler { return l.q.w.logger.Handler() }

func (l queueLog) attrs() []slog.Attr {
	return []slog.Attr{slog.String("sub", l.q.id), slog.String("callback", wire.Clip(l.q.callback))}
}

// Enabled reports whether the engine's handler logs at level.
func (l queueLog) Enabled(ctx context.Context, level slog.Level) bool {
	return l.base().Enabled(ctx, level)
}

// Handle logs r with the queue's attributes before its own.
func (l queueLog) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(l.attrs()...)
	r.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
	return l.base().Handle(ctx, out)
}

// WithAttrs returns the engine's handler with the queue's attributes and
// attrs preformatted.
func (l queueLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return l.base().WithAttrs(l.attrs()).WithAttrs(attrs)
}

// WithGroup returns the engine's handler with the queue's attributes, then
// the group.
func (l queueLog) WithGroup(name string) slog.Handler {
	return l.base().WithAttrs(l.attrs()).WithGroup(name)
}
