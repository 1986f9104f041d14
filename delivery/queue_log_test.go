package delivery

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unsafe"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// A queue's logger writes what Logger.With("sub", …, "callback", …) on the
// engine's logger wrote: the queue's attributes after the engine's and
// before the record's, at the engine's level, through With and WithGroup.
func TestQueueLogger_AddsTheQueuesAttributes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	cfg := Config{HubURL: testHubURL}
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level:       slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return dropTime(a) },
	}))
	w := NewWebhooks(nil, nil, cfg)
	long := "http://127.0.0.1:1/cb?" + strings.Repeat("x", 500)
	q := &queue{w: w, id: "sub-1", callback: long}
	q.logger = *slog.New(queueLog{q})
	want := slog.New(w.logger.Handler()).With("sub", q.id, "callback", wire.Clip(long))

	for i, log := range []func(l *slog.Logger){
		func(l *slog.Logger) { l.Info("delivered", "seq", 7) },
		func(l *slog.Logger) { l.Debug("not at this level", "seq", 8) },
		func(l *slog.Logger) { l.With("k", "v").Warn("with", "seq", 9) },
		func(l *slog.Logger) { l.WithGroup("g").Error("group", "seq", 10) },
	} {
		log(&q.logger)
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

// The queues of one channel's subscriptions share its topic and channel
// names, however the store handed each subscription over (each read
// decodes copies of its own), when made and when their subscription is
// replaced; and a queue's health tracker logs through the queue's logger.
func TestQueue_SubscriptionsOfAChannelShareItsNames(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWebhooks(nil, nil, Config{HubURL: testHubURL, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	read := func(cb string) hub.Subscription { // as decoded from the store: strings of its own
		return hub.Subscription{ID: "sub-" + cb, Topic: strings.Clone("https://example.org/topic"), Channel: strings.Clone("feed"), Callback: cb}
	}
	a := newQueue(w, read("http://127.0.0.1:1/a"), 1, context.Background(), nil)
	b := newQueue(w, read("http://127.0.0.1:1/b"), 1, context.Background(), nil)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.sub.Topic, b.sub.Topic) || !same(a.sub.Channel, b.sub.Channel) {
		t.Fatal("two queues of one channel hold copies of its topic and channel names")
	}
	if st := a.subStatsLocked(); !same(st.Topic, a.sub.Topic) || !same(st.Channel, a.sub.Channel) {
		t.Fatal("a queue's stats hold names of their own")
	}
	b.setSub(read("http://127.0.0.1:1/b"), 2)
	if !same(a.getSub().Topic, b.getSub().Topic) || !same(a.getSub().Channel, b.getSub().Channel) {
		t.Fatal("a replaced subscription keeps copies of its topic and channel names")
	}
	if got := b.getSub().Topic; got != "https://example.org/topic" {
		t.Fatalf("topic %q", got)
	}
	a.h.Report(context.Background(), "store read", errors.New("connection refused"))
	if got := buf.String(); !strings.Contains(got, "connection refused") || !strings.Contains(got, "sub=sub-http://127.0.0.1:1/a") {
		t.Fatalf("the queue's tracker logged %q, want the failure with the queue's attributes", got)
	}
}

// A queue is made per subscription, a million on a big hub: it stays
// within the allocator's 768-byte size class (the next is 896), so that
// a field added costs what it weighs, or this test says what it costs.
func TestQueue_StaysWithinItsSizeClass(t *testing.T) {
	t.Parallel()
	if size := unsafe.Sizeof(queue{}); size > 768 {
		t.Fatalf("a queue is %d bytes: past 768, each one takes 896 (≈ 128 MB more at 1,000,000 subscriptions); group its small fields or move a rarely used one out", size)
	}
}
