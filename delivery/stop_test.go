package delivery

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/internal/testenv"
)

// startManual runs an engine with a context the test cancels itself;
// wait returns Run's error once it has returned.
func startManual(e *env, cfg Config) (cancel func(), wait func() error) {
	w := NewWebhooks(e.log, e.store, cfg)
	ctx, c := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- w.Run(ctx) }()
	var once sync.Once
	var err error
	wait = func() error {
		once.Do(func() { err = <-ch })
		return err
	}
	e.t.Cleanup(func() { c(); _ = wait() })
	return c, wait
}

func TestWebhooks_InFlightPostFinishesWithinGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	entered := make(chan struct{}, 1)
	proceed := make(chan struct{})
	r := newReceiver(t, func(int, delivery) int {
		entered <- struct{}{}
		<-proceed
		return http.StatusOK
	})
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Grace = wait
	cancel, stopped := startManual(e, cfg)
	<-entered
	cancel()       // stop while the POST is in flight...
	close(proceed) // ...and let it answer 200 within the grace period
	if err := stopped(); err != nil {
		t.Fatal(err)
	}
	if c := e.cursor(sub.ID); c.Seq != seqs[0] {
		t.Fatalf("cursor = %d, want %d: a 2xx within the grace period moves it", c.Seq, seqs[0])
	}
}

func TestWebhooks_PostBeyondGraceIsAbandoned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	entered := make(chan struct{}, 1)
	proceed := make(chan struct{})
	r := newReceiver(t, func(int, delivery) int {
		entered <- struct{}{}
		<-proceed
		return http.StatusOK
	})
	t.Cleanup(func() { close(proceed) })
	sub := e.subscribe(topic, r.url("/cb"), "")
	e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Grace = 50 * time.Millisecond
	cancel, stopped := startManual(e, cfg)
	<-entered
	cancel()
	if err := stopped(); err != nil {
		t.Fatal(err)
	}
	if c := e.cursor(sub.ID); c.Seq != 0 {
		t.Fatalf("cursor moved to %d without a 2xx", c.Seq)
	}
	if dl := e.deadLetters(sub.ID); len(dl) != 0 {
		t.Fatalf("abandoned attempt dead-lettered: %+v", dl)
	}
}

// A queue's run ends with the engine's Run, though its context is not a
// child of Run's (queue.begin): a queue waiting an hour for its next
// retry lets Run return at once, with nothing delivered twice.
func TestWebhooks_RunsEndWithRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return http.StatusInternalServerError })
	e.subscribe(topic, r.url("/cb"), "")
	e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: time.Hour, Multiplier: 1}
	cancel, stopped := startManual(e, cfg)
	testenv.Eventually(t, wait, func() bool { return r.count() == 1 }, "the first attempt")
	done := make(chan error, 1)
	go func() { done <- stopped() }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return while a queue waited for its retry")
	}
	if n := r.count(); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

func TestWebhooks_PerHostConcurrencyIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	var mu sync.Mutex
	inflight, peak := 0, 0
	release := make(chan struct{})
	r := newReceiver(t, func(int, delivery) int {
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		mu.Unlock()
		<-release
		mu.Lock()
		inflight--
		mu.Unlock()
		return http.StatusOK
	})
	var subs []string
	for i := 0; i < 6; i++ {
		subs = append(subs, e.subscribe(topic, r.url("/cb/"+string(rune('a'+i))), "").ID)
	}
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.PerHost = 2
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { mu.Lock(); defer mu.Unlock(); return inflight == 2 })
	close(release)
	for _, id := range subs {
		testenv.Eventually(t, wait, func() bool { return e.cursor(id).Seq == seqs[0] })
	}
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Fatalf("peak concurrency to one host = %d, want 2", peak)
	}
}

func TestWebhooks_SkipsRecordsRemovedByRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 5)
	ctx := context.Background()
	js, err := jetstream.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, e.ns.stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSequence(seqs[3])); err != nil { // keeps the last two
		t.Fatal(err)
	}
	var logs logBuffer
	cfg := e.fastConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[4] })
	if got := strings.Join(r.bodies(), ","); got != "feed-3,feed-4" {
		t.Fatalf("deliveries = %s", got)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "retention") {
		t.Fatalf("no warning about records removed by retention in:\n%s", out)
	}
}

// A queue's POST in flight is cancelled the grace after the queue is
// stopped, one begun after it too, and a cut of a POST that ended does not
// touch the next one, which reuses its context.
func TestQueue_InFlightRequestCutAfterGrace(t *testing.T) {
	t.Parallel()
	q := &queue{w: &Webhooks{cfg: Config{Grace: 20 * time.Millisecond}}, parent: context.Background(), rq: &requester{}}
	runCtx, cancelRun := context.WithCancel(context.Background())
	q.cancelRun = cancelRun
	first, _ := q.beginPost(runCtx)
	ended, _ := q.rq.inFlight()
	q.rq.end() // done before the stop
	running, _ := q.beginPost(runCtx)
	if running != first {
		t.Fatal("the next POST did not reuse the context of the one before")
	}
	q.rq.cut(ended)
	if running.Err() != nil {
		t.Fatal("a cut of a POST that ended cancelled the next one")
	}
	start := time.Now()
	q.stopLocked()
	if runCtx.Err() == nil {
		t.Fatal("the stop did not cancel the queue's run")
	}
	select {
	case <-running.Done():
	case <-time.After(wait):
		t.Fatal("the POST in flight was not cut")
	}
	if since := time.Since(start); since < 20*time.Millisecond {
		t.Fatalf("cut after %s, before the grace", since)
	}
	q.rq.end()
	late, _ := q.beginPost(runCtx)
	if late.Err() != nil {
		t.Fatal("a POST began with the cancelled context of the one before")
	}
	select {
	case <-late.Done():
	case <-time.After(wait):
		t.Fatal("a POST begun after the stop was not cut")
	}
	q.rq.end()
	q.rq.close()
}
