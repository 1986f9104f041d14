package delivery

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// Callback host phases of TestHostLimit_AdaptsToTheHost.
const (
	phaseFast     = iota // answers after fastAnswer
	phaseSlow            // answers after slowAnswer
	phaseThrottle        // the first request is answered 429 Retry-After: 1 after fastAnswer, the others fast
)

// The host's own answer times, long beside what a busy machine adds to a
// loopback answer, so that the host and not the machine decides whether
// it answers quickly: fast is its base, slow beyond six times it and
// four milliseconds (hostadapt.go: the limit is cut).
const (
	fastAnswer = 50 * time.Millisecond
	slowAnswer = 500 * time.Millisecond
)

// A callback host that answers quickly gets more concurrency, up to the
// ceiling; one that slows down gets less; a 429 with Retry-After pauses
// it for as long as asked; and once it answers quickly again its
// concurrency grows back. The host is a real loopback server under a
// steady load of notifications to 30 subscriptions. No figure of the
// machine's speed is judged: the limits are the hub's own, and the pause
// is checked against the end the hub set for it (HostStats.PausedUntil):
// the requests that reach the host within it can only be those already in
// flight when the hub read the 429, at most its slots.
func TestHostLimit_AdaptsToTheHost(t *testing.T) {
	e := newEnv(t)
	e.channel(topic, "feed")
	var (
		phase     atomic.Int32
		throttled atomic.Bool
		mu        sync.Mutex
		arrived   []time.Time // requests from the throttle phase on
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := phase.Load()
		if p == phaseThrottle {
			mu.Lock()
			arrived = append(arrived, time.Now())
			mu.Unlock()
		}
		switch {
		case p == phaseSlow:
			time.Sleep(slowAnswer) // the host being slow, not synchronisation
		case p == phaseThrottle && !throttled.Swap(true):
			// as long as its other answers: an instant 429 would be the
			// host's fastest answer, its base (hostadapt.go) for the next
			// 5 to 10 s, and hold its limit that long once it recovers
			time.Sleep(fastAnswer) // the host's work, not synchronisation
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		default:
			time.Sleep(fastAnswer) // the host's work, not synchronisation
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	host := hostOf(srv.URL)
	for i := range 30 {
		e.subscribe(topic, srv.URL+"/cb/"+strconv.Itoa(i), "")
	}
	cfg := e.fastConfig()
	cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax = 2, 1, 8
	cfg.Schedule.Attempts = 0 // retried until delivered: no dead letter in this test
	// one callback's Retry-After speaks for its host here (isolate.go)
	cfg.Breaker.HostEndpoints = 1
	w, stop := e.start(cfg)

	done := make(chan struct{})
	loaded := make(chan struct{})
	go func() { // a steady load, more than the host takes
		defer close(loaded)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			e.publish(topic, "feed", i, 1)
			time.Sleep(5 * time.Millisecond) // pacing the load, not synchronisation
		}
	}()
	t.Cleanup(func() { close(done); <-loaded; stop() })

	limit := func() HostStats { return hostStats(w, host) }
	testenv.Eventually(t, wait, func() bool { return limit().Limit == 8 }, "a fast host's concurrency grows to the ceiling")

	phase.Store(phaseSlow)
	testenv.Eventually(t, wait, func() bool { return limit().Limit <= 3 }, "a slow host's concurrency shrinks")

	phase.Store(phaseThrottle)
	var paused time.Time // the end of the pause, as the hub set it
	testenv.Eventually(t, wait, func() bool {
		paused = limit().PausedUntil
		return !paused.IsZero()
	}, "the hub paused the host after a 429 with Retry-After")
	testenv.Eventually(t, wait, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !arrived[len(arrived)-1].Before(paused)
	}, "requests again after the pause")
	mu.Lock()
	within := 0
	for _, at := range arrived {
		if at.After(paused.Add(-time.Second)) && at.Before(paused) {
			within++
		}
	}
	mu.Unlock()
	// the limit was at most 3 slots, growing by a fraction of one per
	// answer since; without the pause a fast host gets hundreds
	if within > 4 {
		t.Errorf("%d requests reached the host within the 1 s its 429 asked for, want only those in flight (at most 4)", within)
	}

	testenv.Eventually(t, wait, func() bool { return limit().Limit >= 6 }, "a recovered host's concurrency grows again")
}

// hostStats returns host's figures in w, zero when w has none.
func hostStats(w *Webhooks, host string) HostStats {
	for _, h := range w.Hosts() {
		if h.Host == host {
			return h
		}
	}
	return HostStats{}
}

// A callback host that serves one request at a time answers later the
// more requests the hub has in flight to it: its limit does not climb
// towards the ceiling, as it would for a host that answers as quickly with
// more, but stays near where it started (within a quarter of the ceiling:
// a loaded machine's slower fastest answer lets it a few more), every
// notification delivered and the host never paused for it.
func TestHostLimit_QueueingHostStaysNearItsStart(t *testing.T) {
	e := newEnv(t)
	e.channel(topic, "feed")
	var (
		serial sync.Mutex
		got    atomic.Int64
	)
	const subs, notes = 20, 10
	w, host := onOneHost(t, e, subs, 4, 64, func(w http.ResponseWriter, r *http.Request) {
		serial.Lock()
		time.Sleep(10 * time.Millisecond) // the host's work, one request at a time: not synchronisation
		serial.Unlock()
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})

	e.publish(topic, "feed", 0, notes)
	testenv.Eventually(t, wait, func() bool { return got.Load() >= subs*notes }, "every notification delivered")
	h := hostStats(w, host)
	if h.Limit > 16 {
		t.Errorf("limit %d after %d answers of a host serving one at a time (baseline %.1f ms, smoothed %.1f ms): want at most 16",
			h.Limit, got.Load(), h.BaselineMS, h.SmoothedMS)
	}
	if !h.PausedUntil.IsZero() {
		t.Errorf("host paused until %v for answering slowly", h.PausedUntil)
	}
}

// A callback host whose answers take anywhere from 20 to 60 ms, however
// many requests it has (a distant host, or one whose work varies), is not
// taken for one whose requests queue: its limit grows from its start.
func TestHostLimit_JitteryHostGrows(t *testing.T) {
	e := newEnv(t)
	e.channel(topic, "feed")
	var n atomic.Int64
	w, host := onOneHost(t, e, 60, 4, 32, func(w http.ResponseWriter, r *http.Request) {
		// the host's own time, from 20 to 60 ms in a fixed spread: not synchronisation
		time.Sleep(20*time.Millisecond + time.Duration(n.Add(7919)%41)*time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	})

	e.publish(topic, "feed", 0, 10) // 600 deliveries: a backlog the start limit holds back
	testenv.Eventually(t, wait, func() bool { return hostStats(w, host).Limit >= 16 },
		"the limit of a jittery but unqueued host grows from 4: %+v", hostStats(w, host))
}

// onOneHost subscribes subs callbacks of a loopback server answering with
// h to e's channel "feed" and starts an engine whose hosts start at start
// slots and grow to ceiling (floor 1); it returns the engine and the host.
func onOneHost(t *testing.T, e *env, subs, start, ceiling int, h http.HandlerFunc) (*Webhooks, string) {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for i := range subs {
		e.subscribe(topic, srv.URL+"/cb/"+strconv.Itoa(i), "")
	}
	cfg := e.fastConfig()
	cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax = start, 1, ceiling
	w, stop := e.start(cfg)
	t.Cleanup(stop)
	return w, hostOf(srv.URL)
}
