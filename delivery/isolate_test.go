package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

func TestJudge_AnswersCountAgainstTheCallbackOnlyReachabilityAgainstTheHost(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, c := range []struct {
		name string
		a    attempt
		want verdict
	}{
		{"2xx", attempt{status: 204}, verdict{outcomeSuccess, outcomeSuccess}},
		{"410", attempt{status: 410}, verdict{outcomeSuccess, outcomeSuccess}},
		{"500", attempt{status: 500}, verdict{outcomeFailure, outcomeSuccess}},
		{"502", attempt{status: 502}, verdict{outcomeFailure, outcomeSuccess}},
		{"404", attempt{status: 404}, verdict{outcomeFailure, outcomeSuccess}},
		{"429", attempt{status: 429, retryAfter: time.Second}, verdict{outcomeFailure, outcomePressure}},
		{"503", attempt{status: 503}, verdict{outcomeFailure, outcomePressure}},
		{"timeout", attempt{err: fmt.Errorf("delivery: POST x: %w", timeoutError{after: 10 * time.Second})}, verdict{outcomeFailure, outcomePressure}},
		{"deadline", attempt{err: context.DeadlineExceeded}, verdict{outcomeFailure, outcomePressure}},
		{"refused", attempt{err: refused}, verdict{outcomeAbandon, outcomeFailure}},
		{"bad URL", attempt{err: errors.New("bad"), permanent: true}, verdict{outcomeAbandon, outcomeAbandon}},
		{"stopping", attempt{err: context.Canceled, abandoned: true}, verdict{outcomeAbandon, outcomeAbandon}},
	} {
		if got := judge(c.a); got != c.want {
			t.Errorf("%s: judge = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestTimeoutError_SaysHowLong(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("delivery: POST http://x/cb: %w", timeoutError{after: 10*time.Second + 3*time.Millisecond})
	if got, want := err.Error(), "delivery: POST http://x/cb: timed out after 10 s"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if !timedOut(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Error("a timeout error is not seen as a timeout")
	}
}

// 429, 503 and timeouts of one callback never count against its host; once
// HostEndpoints callbacks gave them with no answer in between, every one
// of them counts, and the next keep counting until the host answers.
func TestBreakerSet_PressureOfSeveralCallbacksCountsAgainstTheHost(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	s := newBreakerSet(BreakerConfig{Failures: 3, CoolDown: time.Minute, HostEndpoints: 2})
	for range 10 {
		if s.reportFrom("h:80", "http://h/a", t0, outcomePressure) {
			t.Fatal("one callback's pressure counted against the host")
		}
	}
	if st, n := s.state("h:80", t0); st != BreakerClosed || n != 0 {
		t.Fatalf("host %v with %d failures after one callback's pressure", st, n)
	}
	s.report("h:80", t0, outcomeSuccess) // another callback answered: the host is up
	s.reportFrom("h:80", "http://h/a", t0, outcomePressure)
	if !s.reportFrom("h:80", "http://h/b", t0, outcomePressure) {
		t.Fatal("two callbacks' pressure did not count")
	}
	if st, n := s.state("h:80", t0); st != BreakerClosed || n != 2 {
		t.Fatalf("host %v with %d failures, want closed with 2", st, n)
	}
	if !s.reportFrom("h:80", "http://h/a", t0, outcomePressure) {
		t.Fatal("pressure after the host was judged overloaded did not count")
	}
	if st, _ := s.state("h:80", t0); st != BreakerOpen {
		t.Fatalf("host %v after 3 counted failures, want open", st)
	}

	// Pressure older than the cool-down is forgotten.
	s2 := newBreakerSet(BreakerConfig{Failures: 3, CoolDown: time.Minute, HostEndpoints: 2})
	s2.reportFrom("h:80", "http://h/a", t0, outcomePressure)
	if s2.reportFrom("h:80", "http://h/b", t0.Add(2*time.Minute), outcomePressure) {
		t.Fatal("pressure of two callbacks two cool-downs apart counted")
	}
	// HostEndpoints 1: any callback speaks for its host.
	s1 := newBreakerSet(BreakerConfig{Failures: 1, CoolDown: time.Minute, HostEndpoints: 1})
	if !s1.reportFrom("h:80", "http://h/a", t0, outcomePressure) {
		t.Fatal("HostEndpoints 1: pressure did not count")
	}
}

// Two subscriptions on one loopback host, one whose callback fails for
// good: every notification of the other is delivered without waiting on
// the failing one's retries, its circuit or its Retry-After. The failing
// one's circuit opens after 2 attempts (as a host's would) for ten
// minutes, and its Retry-After asks for ten, so a healthy delivery that
// waited on any of them would take minutes; each is asserted to take less than 30 s (on an idle
// machine they take milliseconds: the figures are logged).
func TestWebhooks_FailingCallbackNeverHoldsBackItsHostsOthers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		// requests is how many the failing callback gets: 2, then its
		// circuit opens; 1 when its Retry-After holds it back.
		requests int
		state    string
	}{
		{"500", func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) }, 2, StateCircuitOpen},
		{"429 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "600")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 1, StateFailing},
		{"503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, 2, StateCircuitOpen},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const n = 25 // the failing callback is held back after its first 2 requests: the rest show the host is not
			long := 10 * time.Minute
			e := newEnv(t)
			e.channel(topic, "feed")
			var mu sync.Mutex
			arrived := map[string]time.Time{}
			failed := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b := make([]byte, 64)
				k, _ := r.Body.Read(b)
				now := time.Now()
				mu.Lock()
				defer mu.Unlock()
				if r.URL.Path == "/failing" {
					failed++
					c.answer(w)
					return
				}
				arrived[string(b[:k])] = now
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(srv.Close)
			failing := e.subscribe(topic, srv.URL+"/failing", "")
			healthy := e.subscribe(topic, srv.URL+"/healthy", "")
			cfg := e.fastConfig()
			// the failing one retries at once until its circuit opens, for long
			cfg.Schedule = Schedule{Initial: time.Millisecond, Multiplier: 1, Attempts: 100}
			cfg.Breaker = BreakerConfig{Failures: 2, CoolDown: long, CallbackFailures: 2, CallbackCoolDown: long}
			cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax = 1, 1, 1 // one slot: the two share it
			w, _ := e.start(cfg)

			var worst time.Duration
			var total time.Duration
			for i := range n {
				body := fmt.Sprintf("feed-%d", i)
				published := time.Now()
				e.publish(topic, "feed", i, 1)
				var at time.Time
				testenv.Eventually(t, time.Minute, func() bool {
					mu.Lock()
					defer mu.Unlock()
					at = arrived[body]
					return !at.IsZero()
				}, "healthy delivery of %s", body)
				d := at.Sub(published)
				total += d
				worst = max(worst, d)
				if d > 30*time.Second {
					t.Fatalf("%s reached the healthy callback %v after its publish", body, d)
				}
			}
			t.Logf("%d healthy deliveries: mean %v, worst %v after publish", n, total/n, worst)
			testenv.Eventually(t, wait, func() bool {
				s, _ := statsOf(w, failing.ID)
				return s.State == c.state && s.ConsecutiveFailures == c.requests
			}, "the failing callback %s", c.state)
			mu.Lock()
			if failed != c.requests {
				t.Errorf("the failing callback got %d requests, want %d (then it waits 10 minutes)", failed, c.requests)
			}
			mu.Unlock()
			s, _ := statsOf(w, healthy.ID)
			if s.State != StateActive || s.HostBreaker != "closed" || s.CallbackBreaker == nil || s.CallbackBreaker.State != "closed" {
				t.Errorf("healthy subscription's stats: %+v", s)
			}
			if hs := hostStats(w, hostOf(srv.URL)); hs.Breaker.State != "closed" || !hs.PausedUntil.IsZero() {
				t.Errorf("host stats %+v: the host was held back for one callback", hs)
			}
		})
	}
}

// A host that refuses connections opens its host circuit: every
// subscription of the host is then held back, and the stats say so.
func TestWebhooks_HostBreakerOpensWhenTheHostRefusesConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // the port now refuses connections
	subA := e.subscribe(topic, base+"/a", "")
	subB := e.subscribe(topic, base+"/b", "")
	e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: time.Millisecond, Multiplier: 1, Attempts: 1000}
	cfg.Breaker = BreakerConfig{Failures: 3, CoolDown: time.Hour, CallbackFailures: 3, CallbackCoolDown: time.Hour}
	w, _ := e.start(cfg)

	testenv.Eventually(t, wait, func() bool {
		a, _ := statsOf(w, subA.ID)
		b, _ := statsOf(w, subB.ID)
		return a.HostBreaker == "open" && b.HostBreaker == "open" && a.State == StateCircuitOpen && b.State == StateCircuitOpen
	}, "host circuit open for both subscriptions")
	hs := hostStats(w, hostOf(base))
	// both subscriptions' attempts may be under way when the third failure
	// opens it: the one in flight counts too
	if hs.Breaker.State != "open" || hs.Breaker.ConsecutiveFailures < 3 || hs.Breaker.ConsecutiveFailures > 4 || hs.Breaker.Failures != 3 ||
		hs.Breaker.CoolDownSeconds != 3600 || hs.Breaker.OpenUntil.IsZero() {
		t.Errorf("host breaker stats %+v", hs.Breaker)
	}
	for _, id := range []string{subA.ID, subB.ID} {
		if s, _ := statsOf(w, id); s.CallbackBreaker == nil || s.CallbackBreaker.State != "closed" || !strings.Contains(s.LastError, "refused") {
			t.Errorf("stats of %s: %+v; a refused connection is the host's, not the callback's", id, s)
		}
	}
}
