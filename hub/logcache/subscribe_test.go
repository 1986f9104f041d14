package logcache_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// runCache starts a cache in front of l for the test's duration.
func runCache(t *testing.T, l *memLog) *logcache.Cache {
	t.Helper()
	c := logcache.New(l, logcache.Config{MaxRecords: 16, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// collect takes batches from sub until it holds n records.
func collect(t *testing.T, sub *logcache.Subscription, n int) []wire.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []wire.Record
	for len(got) < n {
		b, ok := sub.Next(ctx)
		if !ok {
			t.Fatalf("Next ended after %d of %d records", len(got), n)
		}
		got = append(got, b.Records...)
	}
	return got
}

func seqs(recs []wire.Record) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// TestSubscribe_InOrderPerChannelAndResumable: a subscription returns its
// channel's records (or every channel's) after its position, in order,
// across more records than the ring holds and than one batch, and a
// subscription started at another's position goes on exactly after it.
func TestSubscribe_InOrderPerChannelAndResumable(t *testing.T) {
	l := newMemLog()
	c := runCache(t, l)
	ctx := context.Background()
	var wantA, wantAll []uint64
	for i := range 40 {
		ch := "a"
		if i%3 == 0 {
			ch = "b"
		}
		seq, _, _ := c.Append(ctx, wire.Record{Channel: ch})
		wantAll = append(wantAll, seq)
		if ch == "a" {
			wantA = append(wantA, seq)
		}
	}
	a := logcache.Subscribe(c, 0, logcache.Options{Channel: "a", Batch: 5})
	if got := seqs(collect(t, a, len(wantA))); !slices.Equal(got, wantA) {
		t.Fatalf("channel a: %v, want %v", got, wantA)
	}
	all := logcache.Subscribe(c, 0, logcache.Options{Batch: 7})
	first := seqs(collect(t, all, 14))
	resumed := logcache.Subscribe(c, all.Position(), logcache.Options{})
	rest := seqs(collect(t, resumed, len(wantAll)-len(first)))
	if got := append(first, rest...); !slices.Equal(got, wantAll) {
		t.Fatalf("every channel, resumed at %d: %v, want %v", all.Position(), got, wantAll)
	}
}

// TestSubscribe_SeekEndThenLostSignal: SeekEnd positions after the records
// already in the log; an append whose change signal was lost still comes,
// by the subscription's poll.
func TestSubscribe_SeekEndThenLostSignal(t *testing.T) {
	l := newMemLog()
	c := runCache(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 3 {
		_, _, _ = l.Append(ctx, wire.Record{Channel: "a"})
	}
	sub := logcache.Subscribe(c, 0, logcache.Options{Poll: 20 * time.Millisecond})
	if !sub.SeekEnd(ctx) || sub.Position() != 3 {
		t.Fatalf("SeekEnd: position %d, want 3", sub.Position())
	}
	quiet := l.appendQuiet(wire.Record{Channel: "a"})
	if got := seqs(collect(t, sub, 1)); !slices.Equal(got, []uint64{quiet}) {
		t.Fatalf("after a lost signal: %v, want [%d]", got, quiet)
	}
}

// TestSubscribe_OutageReportsHealthAndResumes: while the log fails, the
// subscription's health says so and Next keeps retrying; once the log
// answers, the next batch is marked Resumed and holds what was appended
// meanwhile, and the health is good again.
func TestSubscribe_OutageReportsHealthAndResumes(t *testing.T) {
	ml := newMemLog()
	fl := newFlakyLog(ml)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := loophealth.New(slog.New(slog.DiscardHandler))
	sub := logcache.Subscribe(fl, 0, logcache.Options{Name: "test", Health: h, Poll: 20 * time.Millisecond})
	if !sub.SeekEnd(ctx) {
		t.Fatal("SeekEnd")
	}
	fl.down.Store(true)
	got := make(chan logcache.Batch, 1)
	go func() {
		b, _ := sub.Next(ctx)
		b.Records = append([]wire.Record(nil), b.Records...)
		got <- b
	}()
	testenv.Eventually(t, 10*time.Second, func() bool { ok, _, _ := sub.Health(); return !ok }, "health reports the outage")
	if ok, _, err := h.State(); ok || !errors.Is(err, errOutage) {
		t.Fatalf("the subscriber's tracker: ok %v, err %v; want the outage", ok, err)
	}
	seq, _, _ := ml.Append(ctx, wire.Record{Channel: "a"})
	fl.down.Store(false)
	var b logcache.Batch
	select {
	case b = <-got:
	case <-ctx.Done():
		t.Fatal("Next did not return after the log came back")
	}
	if !b.Resumed {
		t.Error("the first batch after the outage is not marked Resumed")
	}
	if len(b.Records) == 0 {
		b.Records = collect(t, sub, 1)
	}
	if s := seqs(b.Records); !slices.Equal(s, []uint64{seq}) {
		t.Fatalf("after the outage: %v, want [%d]", s, seq)
	}
	if ok, _, err := sub.Health(); !ok {
		t.Fatalf("health after recovery: %v", err)
	}
}

// TestAwait_BoundErrorAndTick: Await reports true once ready does, false
// when its bound passes first, returns ready's error, and tells ready when
// a tick woke it.
func TestAwait_BoundErrorAndTick(t *testing.T) {
	l := newMemLog()
	ctx := context.Background()
	go func() { _, _, _ = l.Append(ctx, wire.Record{Channel: "a"}) }()
	ok, err := logcache.Await(ctx, l, 10*time.Second, nil, func(bool) (bool, error) {
		return logcache.Visible(ctx, l, 1)
	})
	if !ok || err != nil {
		t.Fatalf("waiting for an append: %v, %v", ok, err)
	}
	if ok, err := logcache.Await(ctx, l, 10*time.Millisecond, nil, func(bool) (bool, error) { return false, nil }); ok || err != nil {
		t.Fatalf("past the bound: %v, %v; want false, nil", ok, err)
	}
	boom := errors.New("boom")
	if _, err := logcache.Await(ctx, l, 0, nil, func(bool) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("ready's error: %v", err)
	}
	tick := make(chan time.Time, 1)
	tick <- time.Now()
	ok, err = logcache.Await(ctx, l, 10*time.Second, tick, func(ticked bool) (bool, error) { return ticked, nil })
	if !ok || err != nil {
		t.Fatalf("tick: %v, %v", ok, err)
	}
}
