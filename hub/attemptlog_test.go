package hub_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/testenv"
)

// gatedWriter holds every write until its gate opens, as a store that
// stopped answering does; fail makes the writes fail.
type gatedWriter struct {
	hub.AttemptWriter
	gate    chan struct{}
	entered chan struct{}
	mu      sync.Mutex
	fail    error
}

func (g *gatedWriter) AddAttempts(ctx context.Context, as []hub.Attempt) error {
	g.entered <- struct{}{}
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return g.fail
	}
	return g.AttemptWriter.AddAttempts(ctx, as)
}

func redisStore(t *testing.T) hub.Store {
	t.Helper()
	st, err := redisstore.Open(context.Background(), testenv.Redis(t), redisstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestAttemptLog_WritesTheNewestOfEachSubscriptionInOrder(t *testing.T) {
	st := redisStore(t)
	l := hub.NewAttemptLog(st, hub.AttemptLogConfig{})
	a, b := hub.SubscriptionID("https://example.org/t", "https://a.example/"), hub.SubscriptionID("https://example.org/t", "https://b.example/")
	for i := range 3 * hub.AttemptLogLen {
		l.Record(hub.Attempt{SubID: a, Seq: uint64(i + 1)})
		if i%10 == 0 {
			l.Record(hub.Attempt{SubID: b, Seq: uint64(i + 1)})
		}
	}
	l.Flush(context.Background())
	got, err := st.Attempts(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != hub.AttemptLogLen || got[0].Seq != 3*hub.AttemptLogLen || got[len(got)-1].Seq != 2*hub.AttemptLogLen+1 {
		t.Fatalf("log of a: %d attempts, seq %d first, want the newest %d", len(got), got[0].Seq, hub.AttemptLogLen)
	}
	gotB, _ := st.Attempts(context.Background(), b)
	if len(gotB) != 15 || gotB[0].Seq != 141 {
		t.Fatalf("log of b: %d attempts, want 15 newest first", len(gotB))
	}
	if written, dropped := l.Stats(); written != hub.AttemptLogLen+15 || dropped != 0 {
		t.Fatalf("stats: %d written, %d dropped; want %d, 0", written, dropped, hub.AttemptLogLen+15)
	}
}

// While the store does not answer, Record goes on without waiting: records
// beyond MaxPending are dropped and counted, and a failed write counts its
// batch as dropped.
func TestAttemptLog_RecordNeverWaitsForTheStore(t *testing.T) {
	st := redisStore(t)
	w := &gatedWriter{AttemptWriter: st, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	const maxPending = 100
	l := hub.NewAttemptLog(w, hub.AttemptLogConfig{MaxPending: maxPending})
	sub := func(i int) string {
		return hub.SubscriptionID("https://example.org/t", "https://cb.example/"+string(rune('a'+i%26)))
	}
	for i := range 10 {
		l.Record(hub.Attempt{SubID: sub(i), Seq: uint64(i)})
	}
	flushed := make(chan struct{})
	go func() { l.Flush(context.Background()); close(flushed) }()
	<-w.entered // the write of 10 hangs in the store

	done := make(chan struct{})
	go func() {
		for i := range maxPending + 30 {
			l.Record(hub.Attempt{SubID: sub(i), Seq: uint64(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Record waited for the store")
	}
	if _, dropped := l.Stats(); dropped != 30 {
		t.Fatalf("%d dropped beyond MaxPending, want 30", dropped)
	}
	w.mu.Lock()
	w.fail = errors.New("store down")
	w.mu.Unlock()
	close(w.gate)
	<-flushed
	if written, dropped := l.Stats(); written != 0 || dropped != 40 {
		t.Fatalf("after a failed write of 10: %d written, %d dropped; want 0, 40", written, dropped)
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	go func() { <-w.entered }()
	l.Flush(context.Background())
	if written, _ := l.Stats(); written != maxPending {
		t.Fatalf("%d written once the store answers, want the %d held", written, maxPending)
	}
}

func TestAttemptLog_RunFlushesOnStop(t *testing.T) {
	st := redisStore(t)
	l := hub.NewAttemptLog(st, hub.AttemptLogConfig{Flush: time.Hour})
	sub := hub.SubscriptionID("https://example.org/t", "https://a.example/")
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- l.Run(ctx) }()
	l.Record(hub.Attempt{SubID: sub, Seq: 7})
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got, err := st.Attempts(context.Background(), sub); err != nil || len(got) != 1 {
		t.Fatalf("after Run stopped the log holds %d attempts (%v), want 1", len(got), err)
	}
}

// A subscription whose attempts all delivered at the first attempt is
// written once Hold has passed, one with a failed attempt or a retry at
// the next Flush, everything when Run stops; when half of MaxPending is
// held, healthy subscriptions are written until a quarter is left.
func TestAttemptLog_HoldsHealthySubscriptions(t *testing.T) {
	st := redisStore(t)
	const maxPending = 200
	l := hub.NewAttemptLog(st, hub.AttemptLogConfig{Flush: 10 * time.Millisecond, Hold: time.Hour, MaxPending: maxPending})
	sub := func(name string) string {
		return hub.SubscriptionID("https://example.org/t", "https://"+name+".example/")
	}
	healthy, failing, retried := sub("healthy"), sub("failing"), sub("retried")
	l.Record(hub.Attempt{SubID: healthy, Seq: 1, Attempt: 1, Status: 204})
	l.Record(hub.Attempt{SubID: failing, Seq: 1, Attempt: 1, Status: 204})
	l.Record(hub.Attempt{SubID: failing, Seq: 2, Attempt: 1, Status: 503, Error: "callback answered 503"})
	l.Record(hub.Attempt{SubID: retried, Seq: 1, Attempt: 2, Status: 204})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- l.Run(ctx) }()
	count := func(id string) int {
		got, err := st.Attempts(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return count(failing) == 2 && count(retried) == 1 },
		"the failing and the retried subscription written")
	if n := count(healthy); n != 0 {
		t.Fatalf("the healthy subscription's attempt was written before its hold ended (%d)", n)
	}

	// 10 healthy subscriptions of 10 records each: half of MaxPending
	// with the one held once 99 are recorded; 50 or 51 records are to go,
	// in whole subscriptions.
	written, _ := l.Stats()
	for i := range 10 {
		for seq := range 10 {
			l.Record(hub.Attempt{SubID: sub("busy" + strconv.Itoa(i)), Seq: uint64(seq + 1), Attempt: 1, Status: 204})
		}
	}
	var now uint64
	testenv.Eventually(t, 10*time.Second, func() bool { now, _ = l.Stats(); return now > written }, "a write under pressure")
	if now-written < 50 || now-written > 61 {
		t.Fatalf("%d records written under pressure, want the 50-61 of whole subscriptions that leave a quarter of MaxPending", now-written)
	}

	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if n := count(healthy); n != 1 {
		t.Fatalf("after Run stopped the healthy subscription's log holds %d attempts, want 1", n)
	}
}

// Queues record at once, under the log's several locks, while it writes:
// every record is written once, none lost or doubled.
func TestAttemptLog_ConcurrentRecordsAllWritten(t *testing.T) {
	st := redisStore(t)
	l := hub.NewAttemptLog(st, hub.AttemptLogConfig{Flush: time.Millisecond, Hold: -1})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- l.Run(ctx) }()
	const writers, each, subs = 8, 100, 80
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				id := hub.SubscriptionID("https://example.org/t", "https://cb.example/"+strconv.Itoa((g*each+i)%subs))
				l.Record(hub.Attempt{SubID: id, Seq: uint64(g*each + i + 1), Attempt: 1, Status: 204})
			}
		})
	}
	wg.Wait()
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if written, dropped := l.Stats(); written != writers*each || dropped != 0 {
		t.Fatalf("%d written, %d dropped; want %d, 0", written, dropped, writers*each)
	}
	for s := range subs {
		got, err := st.Attempts(context.Background(), hub.SubscriptionID("https://example.org/t", "https://cb.example/"+strconv.Itoa(s)))
		if err != nil || len(got) != writers*each/subs {
			t.Fatalf("subscription %d: %d attempts (%v), want %d", s, len(got), err, writers*each/subs)
		}
	}
}
