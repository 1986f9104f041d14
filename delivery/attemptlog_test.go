package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

// Every attempt lands in the subscription's attempt log in the store:
// its sequence, number, status, latency, the kept response headers and
// body start of a failure, the reason and when the next attempt comes;
// none for a delivery, a dead letter's last attempt or a connection that
// failed.
func TestWebhooks_AttemptLogRecordsEveryAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	var n atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1") // honoured: kept short
			w.Header().Set("Set-Cookie", "session=secret")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(strings.Repeat("overloaded ", 1000)))
		case 2:
			http.Error(w, "no such hook", http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(flaky.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	subFlaky := e.subscribe(topic, flaky.URL+"/cb", "")
	subDown := e.subscribe(topic, closed.URL+"/cb", "")
	seq := e.publish(topic, "feed", 0, 1)[0]

	log := hub.NewAttemptLog(e.store, hub.AttemptLogConfig{Flush: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = log.Run(ctx) }()
	cfg := e.fastConfig()
	cfg.Attempts = log
	e.start(cfg)

	attempts := func(id string, want int) []hub.Attempt {
		t.Helper()
		var got []hub.Attempt
		testenv.Eventually(t, wait, func() bool {
			got, _ = e.store.Attempts(context.Background(), id)
			return len(got) >= want
		}, "attempts in the store")
		return got
	}
	got := attempts(subFlaky.ID, 3)
	if len(got) != 3 {
		t.Fatalf("%d attempts of the flaky callback, want 3", len(got))
	}
	ok, notFound, busy := got[0], got[1], got[2] // newest first
	for i, a := range got {
		if a.Seq != seq || a.Attempt != 3-i || a.SubID != subFlaky.ID || a.Time.IsZero() || a.LatencyMS <= 0 {
			t.Errorf("attempt %d: %+v, want seq %d, attempt %d, a time and a latency", i, a, seq, 3-i)
		}
	}
	if ok.Status != http.StatusNoContent || ok.Error != "" || !ok.NextRetry.IsZero() || ok.Body != "" || ok.Headers != nil {
		t.Errorf("delivered attempt: %+v", ok)
	}
	if notFound.Status != http.StatusNotFound || !strings.Contains(notFound.Error, "404") || notFound.Body != "no such hook\n" ||
		!notFound.NextRetry.After(notFound.Time) || notFound.Headers["Content-Type"] != "text/plain; charset=utf-8" {
		t.Errorf("404 attempt: %+v", notFound)
	}
	if busy.Status != http.StatusServiceUnavailable || len(busy.Body) != hub.AttemptBodyLen || busy.Headers["Retry-After"] != "1" ||
		busy.Headers["Set-Cookie"] != "" || busy.NextRetry.IsZero() {
		t.Errorf("503 attempt: status %d, %d body bytes, headers %v, next %v", busy.Status, len(busy.Body), busy.Headers, busy.NextRetry)
	}

	down := attempts(subDown.ID, 4)
	testenv.Eventually(t, wait, func() bool { return len(e.deadLetters(subDown.ID)) == 1 }, "the dead letter")
	if down[0].Attempt != 4 || !down[0].NextRetry.IsZero() {
		t.Errorf("last attempt before the dead letter: %+v, want attempt 4 with no next retry", down[0])
	}
	for _, a := range down {
		if a.Status != 0 || a.Error == "" || a.Body != "" {
			t.Errorf("attempt on a closed port: %+v, want no status and an error", a)
		}
	}
	if !down[1].NextRetry.After(down[1].Time) {
		t.Errorf("attempt 3 of 4 has no next retry: %+v", down[1])
	}
}

// BenchmarkWebhooks_DeliverToOneCallbackWithAttemptLog is
// BenchmarkWebhooks_DeliverToOneCallback with every attempt recorded in the
// attempt log and written to the store: what the log costs a delivery.
//
//	go test -run '^$' -bench 'DeliverToOneCallback' -benchtime 20000x -count 3 ./delivery/
func BenchmarkWebhooks_DeliverToOneCallbackWithAttemptLog(b *testing.B) {
	benchDeliver(b, func(e *env, cfg *Config) {
		l := hub.NewAttemptLog(e.store, hub.AttemptLogConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		b.Cleanup(func() { cancel(); <-done }) // the last write before the store closes
		go func() { _ = l.Run(ctx); close(done) }()
		cfg.Attempts = l
	}, "")
}
