package delivery

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// besideFailingRun is how long
// TestWebhooks_HealthyCallbackBesideOneFailingForGood publishes: 3 s in
// the suite (the failing callback's schedule runs out and its circuit
// opens after about 1.5 s), 5 minutes with RSHUB_LONG=1.
func besideFailingRun() (run time.Duration, long bool) {
	if os.Getenv("RSHUB_LONG") == "1" {
		return 5 * time.Minute, true
	}
	return 3 * time.Second, false
}

// Two subscriptions on one loopback host, one whose callback answers 500
// for good, the host's one delivery slot shared: a notification is
// published every 100 ms, for minutes with RSHUB_LONG=1. The failing
// callback keeps going through its retry schedule, its circuit opening
// and probing again every second, its notifications dead-lettered; every
// notification of the healthy one is delivered, in order, and its own
// circuit and its host's stay closed throughout (checked at each publish).
// The time from publish to receipt is logged; the long run, meant for a
// quiet machine, also asserts the bound of 1 s for every one.
func TestWebhooks_HealthyCallbackBesideOneFailingForGood(t *testing.T) {
	run, long := besideFailingRun()
	if !long { // only the long run bounds a time; the short one waits, mostly, so shares the machine
		t.Parallel()
	}
	const every = 100 * time.Millisecond
	e := newEnv(t)
	e.channel(topic, "feed")
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	var order []string
	failed := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		k, _ := r.Body.Read(b)
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/failing" {
			failed++
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if _, dup := arrived[string(b[:k])]; !dup {
			arrived[string(b[:k])] = now
			order = append(order, string(b[:k]))
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	failing := e.subscribe(topic, srv.URL+"/failing", "")
	healthy := e.subscribe(topic, srv.URL+"/healthy", "")
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 2 * time.Second, Attempts: 5}
	cfg.Breaker = BreakerConfig{Failures: DefaultBreakerFailures, CoolDown: time.Second,
		CallbackFailures: DefaultBreakerFailures, CallbackCoolDown: time.Second, HostEndpoints: DefaultBreakerHostEndpoints}
	cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax = 1, 1, 1 // one slot: the two share it
	w, _ := e.start(cfg)

	published := map[string]time.Time{}
	var bodies []string
	tick := time.NewTicker(every)
	defer tick.Stop()
	for end := time.Now().Add(run); time.Now().Before(end); <-tick.C {
		body := fmt.Sprintf("feed-%d", len(bodies))
		published[body] = time.Now()
		e.publish(topic, "feed", len(bodies), 1)
		bodies = append(bodies, body)
		if s, ok := statsOf(w, healthy.ID); ok && (s.HostBreaker != "closed" || (s.CallbackBreaker != nil && s.CallbackBreaker.State != "closed")) {
			t.Fatalf("after %s the healthy subscription is held back: %+v", body, s)
		}
	}
	testenv.Eventually(t, wait, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived) == len(bodies) && failed > DefaultBreakerFailures
	}, "every healthy notification delivered, the failing callback asked again after its circuit opened")

	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, bodies) {
		t.Errorf("the healthy callback received %d notifications out of order", len(order))
	}
	lat := make([]time.Duration, 0, len(bodies))
	late := 0
	for _, b := range bodies {
		d := arrived[b].Sub(published[b])
		lat = append(lat, d)
		if d > time.Second {
			late++
		}
	}
	slices.Sort(lat)
	fs, _ := statsOf(w, failing.ID)
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	t.Logf("%v, %d notifications, the failing callback asked %d times (%s, %d dead letters): publish to receipt p50 %v, p99 %v, max %v; %d after more than 1 s",
		run, len(bodies), failed, fs.State, fs.DeadLetters, q(0.5), q(0.99), lat[len(lat)-1], late)
	if hs := hostStats(w, hostOf(srv.URL)); hs.Breaker.State != "closed" {
		t.Errorf("host breaker %+v: the host was held back for one callback", hs.Breaker)
	}
	if long && late > 0 {
		t.Errorf("%d of %d healthy notifications arrived more than 1 s after their publish", late, len(bodies))
	}
}
