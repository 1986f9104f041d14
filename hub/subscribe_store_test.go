package hub_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// faultyStore is the real store whose PutSubscription and
// DeleteSubscription fail, as a stalled store's time out: the first
// failPuts puts (every one when negative), and every delete while
// failDeletes is set.
type faultyStore struct {
	hub.Store
	failPuts    int64
	puts        atomic.Int64 // PutSubscription calls
	failDeletes atomic.Bool
	deletes     atomic.Int64 // failed DeleteSubscription calls
}

var errInjected = errors.New("injected: store write timed out")

func (s *faultyStore) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	if n := s.puts.Add(1); s.failPuts < 0 || n <= s.failPuts {
		return errInjected
	}
	return s.Store.PutSubscription(ctx, sub)
}

func (s *faultyStore) DeleteSubscription(ctx context.Context, id string) error {
	if s.failDeletes.Load() {
		s.deletes.Add(1)
		return errInjected
	}
	return s.Store.DeleteSubscription(ctx, id)
}

// unstoredCount is a hub.Observer that counts Unstored by mode.
type unstoredCount struct{ subscribe, unsubscribe atomic.Int64 }

func (*unstoredCount) Published(string, int, time.Duration) {}
func (*unstoredCount) Rejected(string)                      {}
func (*unstoredCount) Verified(string, bool)                {}
func (*unstoredCount) GapRecorded(string)                   {}
func (u *unstoredCount) Unstored(mode string) {
	if mode == "subscribe" {
		u.subscribe.Add(1)
	} else {
		u.unsubscribe.Add(1)
	}
}

// newFaultyFixture runs a hub over st wrapping the fixture's real store,
// counting what the store did not take in obs.
func newFaultyFixture(t *testing.T, st *faultyStore, obs *unstoredCount) *fixture {
	return newFixture(t, func(c *hub.Config) {
		st.Store = c.Store
		c.Store = st
		c.Observer = obs
	})
}

// denials returns the hub.mode=denied requests among reqs.
func denials(reqs []url.Values) []url.Values {
	var out []url.Values
	for _, q := range reqs {
		if q.Get("hub.mode") == "denied" {
			out = append(out, q)
		}
	}
	return out
}

// A verified subscription whose first writes fail (a stalled store timing
// out) is written again after a backoff: it ends stored, active and
// handed to delivery, and the subscriber is told nothing else.
func TestSubscribe_VerifiedStoreFailureRetried(t *testing.T) {
	st, obs := &faultyStore{failPuts: 2}, &unstoredCount{}
	f := newFaultyFixture(t, st, obs)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	if status, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"))); status != http.StatusAccepted {
		t.Fatalf("status %d %q, want 202", status, body)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	if n := st.puts.Load(); n != 3 {
		t.Errorf("%d puts, want 2 failed and 1 stored", n)
	}
	if sub.Channel != ch.Name || sub.Lease != 864000 {
		t.Errorf("stored %+v", sub)
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return len(f.Active.Activated()) == 1 }, "the stored subscription was never activated")
	if got := f.Active.Activated()[0]; got.ID != sub.ID || got.State != hub.SubActive {
		t.Errorf("activated %+v, want the stored subscription", got)
	}
	if d := denials(cb.Requests()); len(d) != 0 || obs.subscribe.Load() != 0 {
		t.Errorf("denials %v, unstored %d: want none", d, obs.subscribe.Load())
	}
}

// A verified subscription the store never takes is retried for
// StoreRetry on the hub's clock, then denied to its callback exactly
// once, with a reason, counted, and nothing is stored or delivered.
func TestSubscribe_VerifiedStoreFailureDenied(t *testing.T) {
	st, obs := &faultyStore{failPuts: -1}, &unstoredCount{}
	f := newFaultyFixture(t, st, obs)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	if status, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"))); status != http.StatusAccepted {
		t.Fatalf("status %d %q, want 202", status, body)
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return st.puts.Load() >= 3 }, "the failed write was not retried")
	if obs.subscribe.Load() != 0 || len(denials(cb.Requests())) != 0 {
		t.Fatal("denied before StoreRetry passed")
	}
	f.Clock.Advance(hub.DefaultStoreRetry)
	testenv.Eventually(t, 10*time.Second, func() bool { return obs.subscribe.Load() == 1 }, "the unstored subscription was never counted")
	reqs := cb.Requests()
	d := denials(reqs)
	if len(d) != 1 || d[0].Get("hub.topic") != ch.Topic || d[0].Get("hub.reason") == "" {
		t.Fatalf("requests %v: want one verification then one denial with a reason", reqs)
	}
	if len(reqs) != 2 || reqs[0].Get("hub.mode") != "subscribe" {
		t.Fatalf("requests %v: want the verification, then the denial", reqs)
	}
	id := hub.SubscriptionID(ch.Topic, cb.URL("/cb"))
	if _, err := f.Store.Subscription(context.Background(), id); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("stored subscription: err %v, want ErrNotFound", err)
	}
	if a := f.Active.Activated(); len(a) != 0 {
		t.Fatalf("activated %v", a)
	}
}

// A hub that stops while it retries a verified subscription's write stops
// retrying and still tells the subscriber, before Run returns.
func TestSubscribe_VerifiedStoreFailureDeniedOnStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lg, real := hubtest.Backing(t)
	st, obs := &faultyStore{Store: real, failPuts: -1}, &unstoredCount{}
	h, err := hub.New(hub.Config{HubURL: "http://127.0.0.1:1/", Store: st, Log: lg, Observer: obs,
		Client: hubtest.Client(t, "127.0.0.0/8"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.PutChannel(ctx, hub.Channel{Topic: openTopic, Trust: hub.TrustOpen}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { _ = h.Run(runCtx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran })

	cb := hubtest.NewCallback(t)
	f := &hubtest.Fixture{T: t, URL: srv.URL + "/"}
	if status, body := f.PostForm(hubtest.SubscribeForm(openTopic, cb.URL("/cb"))); status != http.StatusAccepted {
		t.Fatalf("status %d %q, want 202", status, body)
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return st.puts.Load() >= 2 }, "the failed write was not retried")
	stop()
	select {
	case <-ran:
	case <-ctx.Done():
		t.Fatal("Run did not return")
	}
	if d := denials(cb.Requests()); len(d) != 1 || obs.subscribe.Load() != 1 {
		t.Fatalf("denials %v, unstored %d: want one of each before Run returned", d, obs.subscribe.Load())
	}
}

// A verified unsubscribe whose delete fails for a while is retried and
// removes the subscription; one the store never takes is counted, the
// subscription stays, and the subscriber is sent no denial (WebSub denies
// subscriptions, not unsubscriptions).
func TestUnsubscribe_VerifiedStoreFailure(t *testing.T) {
	st, obs := &faultyStore{}, &unstoredCount{}
	f := newFaultyFixture(t, st, obs)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	unsubscribe := func() {
		t.Helper()
		form := hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"))
		form.Set("hub.mode", "unsubscribe")
		if status, body := f.PostForm(form); status != http.StatusAccepted {
			t.Fatalf("status %d %q, want 202", status, body)
		}
	}
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))

	st.failDeletes.Store(true)
	unsubscribe()
	testenv.Eventually(t, 10*time.Second, func() bool { return st.deletes.Load() >= 2 }, "the failed delete was not retried")
	f.Clock.Advance(hub.DefaultStoreRetry)
	testenv.Eventually(t, 10*time.Second, func() bool { return obs.unsubscribe.Load() == 1 }, "the unstored unsubscribe was never counted")
	if _, err := f.Store.Subscription(context.Background(), sub.ID); err != nil {
		t.Fatalf("the subscription the store kept: %v", err)
	}
	if d := denials(cb.Requests()); len(d) != 0 {
		t.Fatalf("denials %v for an unsubscribe", d)
	}

	st.deletes.Store(0)
	unsubscribe()
	testenv.Eventually(t, 10*time.Second, func() bool { return st.deletes.Load() >= 1 }, "the delete was not tried")
	st.failDeletes.Store(false)
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := f.Store.Subscription(context.Background(), sub.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "the retried delete never removed the subscription")
	if obs.unsubscribe.Load() != 1 {
		t.Fatalf("unstored unsubscribes %d, want the first one only", obs.unsubscribe.Load())
	}
}
