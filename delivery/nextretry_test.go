package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

// attemptLogOf starts an attempt log over e's store for cfg.
func attemptLogOf(t *testing.T, e *env, cfg *Config) {
	t.Helper()
	log := hub.NewAttemptLog(e.store, hub.AttemptLogConfig{Flush: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = log.Run(ctx) }()
	cfg.Attempts = log
}

// storedAttempts waits for at least n attempts of id in the store and
// returns them oldest first.
func storedAttempts(t *testing.T, e *env, id string, n int) []hub.Attempt {
	t.Helper()
	var got []hub.Attempt
	testenv.Eventually(t, wait, func() bool {
		got, _ = e.store.Attempts(context.Background(), id)
		return len(got) >= n
	}, "%d attempts in the store", n)
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	return got
}

// The attempt log's nextRetry is when the queue makes its next attempt:
// after the schedule's delay, and also after the callback's Retry-After,
// its open circuit, or its subscription's rate, whichever is last. Each
// case makes the schedule's delay (50 ms) far shorter than what holds the
// retry back (1 to 2 s), so a nextRetry of the schedule alone is off by a
// second or more; the retry is asserted never to come before the logged
// time, and within a second after it (on an idle machine, a few
// milliseconds: the figures are logged against the 100 ms), and
// the logged time at least half the hold after the attempt's start.
func TestWebhooks_AttemptLogNextRetryIsTheRealRetry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		fails  int                                      // requests answered with fail before a 204
		fail   func(w http.ResponseWriter)              // the failing answer
		config func(cfg *Config, sub *hub.Subscription) // what holds the retry back
		hold   time.Duration                            // about how long
	}{
		{"Retry-After", 1, func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
		}, func(*Config, *hub.Subscription) {}, 2 * time.Second},
		{"open callback circuit", 2, func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) },
			func(cfg *Config, _ *hub.Subscription) {
				cfg.Breaker = BreakerConfig{Failures: -1, CallbackFailures: 2, CallbackCoolDown: 1500 * time.Millisecond}
			}, 1500 * time.Millisecond},
		{"open host circuit", 2, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
			func(cfg *Config, _ *hub.Subscription) {
				cfg.Breaker = BreakerConfig{Failures: 2, CoolDown: 1500 * time.Millisecond, CallbackFailures: -1, HostEndpoints: 1}
			}, 1500 * time.Millisecond},
		{"rate", 1, func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) },
			func(_ *Config, sub *hub.Subscription) { sub.Rate = 0.5 }, 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channel(topic, "feed")
			var mu sync.Mutex
			var arrived []time.Time
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				arrived = append(arrived, time.Now())
				n := len(arrived)
				mu.Unlock()
				if n <= c.fails {
					c.fail(w)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(srv.Close)
			sub := e.subscribe(topic, srv.URL+"/cb", "")
			cfg := e.fastConfig()
			cfg.Schedule = Schedule{Initial: 50 * time.Millisecond, Multiplier: 1, Attempts: 10}
			c.config(&cfg, &sub)
			if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
				t.Fatal(err)
			}
			attemptLogOf(t, e, &cfg)
			e.publish(topic, "feed", 0, 1)
			e.start(cfg)

			got := storedAttempts(t, e, sub.ID, c.fails+1)
			mu.Lock()
			defer mu.Unlock()
			if len(arrived) != c.fails+1 {
				t.Fatalf("%d requests, want %d", len(arrived), c.fails+1)
			}
			last := got[c.fails-1] // the failure before the retry held back
			retry := arrived[c.fails]
			if last.NextRetry.IsZero() {
				t.Fatalf("attempt %+v has no nextRetry", last)
			}
			off := retry.Sub(last.NextRetry)
			t.Logf("retry %v after the logged nextRetry, %v after the failed attempt", off, retry.Sub(last.Time))
			if off < -20*time.Millisecond || off > time.Second {
				t.Errorf("retry came %v after the logged nextRetry %v (attempt at %v)", off, last.NextRetry, last.Time)
			}
			// From the attempt's start: a rate's next token counts from
			// there, and a loaded machine's slow answer is no part of it.
			start := last.Time.Add(-time.Duration(last.LatencyMS) * time.Millisecond)
			if held := last.NextRetry.Sub(start); held < c.hold/2 {
				t.Errorf("nextRetry %v after the attempt's start; it is held back about %v", held, c.hold)
			}
		})
	}
}

// An attempt that gets no answer in time reads "timed out after N s".
func TestWebhooks_TimedOutAttemptSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	sub := e.subscribe(topic, srv.URL+"/cb", "")
	cfg := e.fastConfig()
	cfg.Client = netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{Request: 500 * time.Millisecond})
	cfg.Schedule = Schedule{Initial: time.Hour, Attempts: 2}
	attemptLogOf(t, e, &cfg)
	e.publish(topic, "feed", 0, 1)
	e.start(cfg)

	got := storedAttempts(t, e, sub.ID, 1)
	if a := got[0]; a.Status != 0 || !strings.HasSuffix(a.Error, ": timed out after 0.5 s") || strings.Contains(a.Error, "context") {
		t.Errorf("timed-out attempt %+v, want its error to say it timed out after 0.5 s", a)
	}
}
