package delivery

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

func TestSubRate_OperatorThenOwnThenDefault_CappedByMax(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		own, operator, def, ceiling, want float64
	}{
		"unlimited":                 {want: 0},
		"own":                       {own: 5, want: 5},
		"default when none asked":   {def: 3, want: 3},
		"own wins over the default": {own: 5, def: 3, want: 5},
		"operator wins over own":    {own: 5, operator: 2, want: 2},
		"operator may raise own":    {own: 5, operator: 8, def: 3, want: 8},
		"capped":                    {own: 500, ceiling: 10, want: 10},
		"operator capped too":       {operator: 500, ceiling: 10, want: 10},
		"unlimited capped":          {ceiling: 10, want: 10},
		"below the cap":             {own: 0.5, ceiling: 10, want: 0.5},
	} {
		got := subRate(hub.Subscription{Rate: c.own, OperatorRate: c.operator}, c.def, c.ceiling)
		if got != c.want {
			t.Errorf("%s: subRate = %v, want %v", name, got, c.want)
		}
	}
}

// span is the time from the first to the last delivery of ds.
func span(ds []delivery) time.Duration { return ds[len(ds)-1].At.Sub(ds[0].At) }

// inOrder fails the test unless ds are the bodies <name>-0 to <name>-n-1.
func inOrder(t *testing.T, what string, ds []delivery, name string, n int) {
	t.Helper()
	if len(ds) != n {
		t.Fatalf("%s: %d deliveries, want %d", what, len(ds), n)
	}
	for i, d := range ds {
		if want := fmt.Sprintf("%s-%d", name, i); d.Body != want {
			t.Fatalf("%s: delivery %d = %q, want %q: order broken", what, i, d.Body, want)
		}
	}
}

// Every way a subscription comes to 5 deliveries a second — its own
// rshub.rate, the hub's default, the hub's maximum over a higher ask —
// spaces 15 deliveries over at least 14/5 s, in log order.
func TestRate_SubscriptionReceivesAtItsRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	own, byDefault, capped := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	sub := e.subscribe(topic, own.url("/own"), "")
	sub.Rate = 5
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	e.subscribe(topic, byDefault.url("/default"), "")
	sub = e.subscribe(topic, capped.url("/capped"), "")
	sub.Rate = 1000
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	const n = 15
	e.publish(topic, "feed", 0, n)
	cfg := e.fastConfig()
	cfg.DefaultRate, cfg.MaxRate = 5, 5
	e.start(cfg)

	for what, r := range map[string]*receiver{"own rate": own, "default rate": byDefault, "capped rate": capped} {
		testenv.Eventually(t, wait, func() bool { return r.count() >= n }, "%s: %d deliveries, got %d", what, n, r.count())
		ds := r.all()
		inOrder(t, what, ds, "feed", n)
		// the ideal is 2.8 s between the first and last send; receipts are
		// timed, and a busy machine can delay the first more than the last,
		// so the floor sits halfway to twice the rate (1.4 s)
		if s := span(ds); s < 2100*time.Millisecond {
			t.Errorf("%s: %d deliveries in %v, faster than 5 a second", what, n, s)
		}
	}
}

// A throttled subscription holds no slot of its host while it waits: its
// host's other subscription (one slot in all) and another host's, fed
// once it waits, are served at full speed and finish well before it.
func TestRate_ThrottledSubscriptionSlowsNoOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	const other = "https://other.example/cl.xml"
	e.channel(other, "other")
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	slow := e.subscribe(topic, a.url("/slow"), "")
	slow.Rate = 2
	if err := e.store.PutSubscription(e.ctx(), slow); err != nil {
		t.Fatal(err)
	}
	e.subscribe(other, a.url("/sibling"), "")
	e.subscribe(other, b.url("/other"), "")
	const n = 8
	e.publish(topic, "feed", 0, n)
	cfg := e.fastConfig()
	cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax = 1, 1, 1
	e.start(cfg)

	byPath := func(r *receiver, path string) []delivery {
		var out []delivery
		for _, d := range r.all() {
			if d.Path == path {
				out = append(out, d)
			}
		}
		return out
	}
	testenv.Eventually(t, wait, func() bool { return len(byPath(a, "/slow")) >= 2 }, "the throttled subscription under way")
	e.publish(other, "other", 0, n)
	testenv.Eventually(t, wait, func() bool { return len(byPath(a, "/slow")) >= n }, "the throttled subscription's deliveries")
	slowDone := byPath(a, "/slow")[n-1].At
	for what, ds := range map[string][]delivery{"same host": byPath(a, "/sibling"), "other host": byPath(b, "/other")} {
		inOrder(t, what, ds, "other", n)
		if done := ds[n-1].At; slowDone.Sub(done) < time.Second {
			t.Errorf("%s: done only %v before the throttled subscription", what, slowDone.Sub(done))
		}
	}
	inOrder(t, "throttled", byPath(a, "/slow"), "feed", n)
}

// The host's rate spaces the deliveries of all its subscriptions
// together, each still in order; the host's figures show it.
func TestRate_PerHostAcrossSubscriptions(t *testing.T) {
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	e.subscribe(topic, r.url("/a"), "")
	e.subscribe(topic, r.url("/b"), "")
	const n = 8
	e.publish(topic, "feed", 0, n)
	cfg := e.fastConfig()
	cfg.PerHostRate = 10
	w, _ := e.start(cfg)

	testenv.Eventually(t, wait, func() bool {
		hs := w.Hosts()
		return len(hs) == 1 && hs[0].Rate == 10 && hs[0].RateWaiting > 0
	}, "the host's rate and waiting deliveries shown: %+v", w.Hosts())
	testenv.Eventually(t, wait, func() bool { return r.count() >= 2*n }, "%d deliveries, got %d", 2*n, r.count())
	all := r.all()
	// 16 deliveries at 10 a second: 1.5 s between the first and the last
	// send. Receipts are timed, and a busy machine can delay the first
	// more than the last (1.444 s was seen at load 25), so the floor sits
	// between the host's rate and the next wrong answer: a rate per
	// subscription instead of per host (2 × 10 a second) takes 0.75 s.
	if s := span(all); s < 1100*time.Millisecond {
		t.Errorf("%d deliveries to one host in %v, faster than its 10 a second", len(all), s)
	}
	for _, path := range []string{"/a", "/b"} {
		var ds []delivery
		for _, d := range all {
			if d.Path == path {
				ds = append(ds, d)
			}
		}
		inOrder(t, path, ds, "feed", n)
	}
}

// A new rate reaches a queue that waits for its token: it is not held to
// the old one until its next delivery.
func TestRate_ChangeAppliesToAWaitingQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	sub.OperatorRate = 0.02 // one every 50 s
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	e.publish(topic, "feed", 0, 3)
	w, _ := e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return r.count() == 1 }, "the first delivery, at once")

	sub.OperatorRate = 0 // its own rate again: none
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	w.Activate(sub)
	testenv.Eventually(t, wait, func() bool { return r.count() == 3 }, "the rest once the rate is lifted, got %d", r.count())
	if took := time.Since(changed); took > 25*time.Second { // half the old rate's 50 s to the next token
		t.Errorf("the rest took %v after the change: the old rate held", took)
	}
	inOrder(t, "after the change", r.all(), "feed", 3)
}

// An engine stops promptly while its queues wait for a subscription's
// token or a host's.
func TestRate_StopWhileWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	bySub, byHost := newReceiver(t, nil), newReceiver(t, nil)
	sub := e.subscribe(topic, bySub.url("/cb"), "")
	sub.Rate = 0.01
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	e.subscribe(topic, byHost.url("/a"), "")
	e.subscribe(topic, byHost.url("/b"), "")
	e.publish(topic, "feed", 0, 2)
	cfg := e.fastConfig()
	cfg.PerHostRate = 0.01
	w, stop := e.start(cfg)
	testenv.Eventually(t, wait, func() bool {
		for _, h := range w.Hosts() {
			if h.Host == hostOf(byHost.url("")) && h.RateWaiting > 0 {
				return bySub.count() == 1
			}
		}
		return false
	}, "queues waiting for their tokens")

	t0 := time.Now()
	stop()
	if took := time.Since(t0); took > 30*time.Second { // a token is 100 s away: a wait not cut short takes that
		t.Errorf("stopping took %v while queues waited for tokens", took)
	}
	if c := e.cursor(sub.ID); c.Seq != 1 {
		t.Errorf("cursor %d after stopping, want 1: a wait cut short moves nothing", c.Seq)
	}
}

// A 429 with Retry-After of one callback delays its subscription's retry,
// not its host (isolate.go); the rate-limited queue waits it out once,
// with no attempt in it, then goes on at its rate.
func TestRate_RetryAfterPauseComposesWithRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	var mu sync.Mutex
	var got []delivery
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, delivery{Body: req.Header.Get("Rshub-Seq"), At: time.Now()})
		if len(got) == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	t.Cleanup(srv.Close)
	requests := func() []delivery {
		mu.Lock()
		defer mu.Unlock()
		return append([]delivery(nil), got...)
	}
	sub := e.subscribe(topic, srv.URL+"/cb", "")
	sub.Rate = 5
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	e.publish(topic, "feed", 0, 3)
	w, _ := e.start(e.fastConfig())

	testenv.Eventually(t, wait, func() bool { return len(requests()) >= 1 }, "the first attempt")
	testenv.Eventually(t, wait, func() bool { s, _ := statsOf(w, sub.ID); return s.LastStatus == http.StatusTooManyRequests }, "the 429 seen")
	if hs := w.Hosts(); len(hs) != 1 || !hs[0].PausedUntil.IsZero() {
		t.Errorf("hosts %+v: one callback's Retry-After paused its host", hs)
	}
	testenv.Eventually(t, wait, func() bool { return len(requests()) >= 4 }, "the retry and the rest")
	rs := requests()
	if len(rs) != 4 {
		t.Fatalf("%d requests, want 4 (a 429, then 3 deliveries)", len(rs))
	}
	// receipt-timed floors, with room for a late first receipt: without
	// the pause the retry comes within milliseconds, without the rate the
	// two deliveries too
	if gap := rs[1].At.Sub(rs[0].At); gap < 1500*time.Millisecond {
		t.Errorf("retry %v after the 429, within its Retry-After of 2 s", gap)
	}
	if rs[0].Body != rs[1].Body {
		t.Errorf("retried %s after the 429 of %s: order broken", rs[1].Body, rs[0].Body)
	}
	if gap := rs[3].At.Sub(rs[1].At); gap < 200*time.Millisecond {
		t.Errorf("3 deliveries after the pause in %v, faster than 5 a second", gap)
	}
}
