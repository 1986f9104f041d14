package delivery

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rshub/rshub/wire"
)

// A queue's logger writes what Logger.With("sub", …, "callback", …) on the
// engine's logger wrote: the queue's attributes after the engine's and
// before the record's, at the engine's level, through With and WithGroup.
func TestQueueLogger_AddsTheQueuesAttributes(t *testing.T) {
	var buf bytes.Buffer
	cfg := Config{HubURL: testHubURL}
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level:       slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return dropTime(a) },
	}))
	w := NewWebhooks(nil, nil, cfg)
	long := "http://127.0.0.1:1/cb?" + strings.Repeat("x", 500)
	q := &queue{w: w, id: "sub-1", callback: long}
	q.logger = slog.New(queueLog{q})
	want := slog.New(w.logger.Handler()).With("sub", q.id, "callback", wire.Clip(long))

	for i, log := range []func(l *slog.Logger){
		func(l *slog.Logger) { l.Info("delivered", "seq", 7) },
		func(l *slog.Logger) { l.Debug("not at this level", "seq", 8) },
		func(l *slog.Logger) { l.With("k", "v").Warn("with", "seq", 9) },
		func(l *slog.Logger) { l.WithGroup("g").Error("group", "seq", 10) },
	} {
		log(q.logger)
		got := buf.String()
		if logged := strings.Contains(got, "sub=sub-1 callback="); logged != (i != 1) { // the Debug one is not
			t.Errorf("queue logger wrote %q", got)
		}
		buf.Reset()
		log(want)
		if exp := buf.String(); got != exp {
			t.Errorf("queue logger wrote\n%q\nwant\n%q", got, exp)
		}
		buf.Reset()
	}
}

func dropTime(a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
