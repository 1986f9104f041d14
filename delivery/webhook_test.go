package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

const topic = "https://source.example/changelist.xml"

func TestWebhooks_DeliversInLogOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	e.channel("https://other.example/cl.xml", "other")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	// Interleave another channel's records: sequences of this channel
	// are not contiguous.
	var seqs []uint64
	for i := 0; i < 200; i += 20 {
		seqs = append(seqs, e.publish(topic, "feed", i, 20)...)
		e.publish("https://other.example/cl.xml", "other", i, 3)
	}
	e.start(e.fastConfig())

	testenv.Eventually(t, wait, func() bool { return r.count() >= 200 }, "200 deliveries, got %d", r.count())
	got := r.bodies()
	if len(got) != 200 {
		t.Fatalf("got %d deliveries, want 200", len(got))
	}
	for i, b := range got {
		if want := fmt.Sprintf("feed-%d", i); b != want {
			t.Fatalf("delivery %d = %q, want %q", i, b, want)
		}
	}
	d := r.all()[0]
	if ct := d.Header.Get("Content-Type"); ct != "application/xml" {
		t.Errorf("Content-Type = %q", ct)
	}
	if links := d.Header.Values("Link"); len(links) != 1 || links[0] != `<`+topic+`>; rel="self", <`+testHubURL+`>; rel="hub"` {
		t.Errorf("Link = %q", links)
	}
	if got := d.Header.Get(wire.HeaderSeq); got != fmt.Sprint(seqs[0]) {
		t.Errorf("%s = %q, want %d", wire.HeaderSeq, got, seqs[0])
	}
	if sig := d.Header.Get(wire.HeaderSignature); sig != "" {
		t.Errorf("signature %q sent for a subscription without secret", sig)
	}
	last := seqs[len(seqs)-1]
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == last }, "cursor at %d", last)
	if c := e.cursor(sub.ID); !c.Until.Equal(time.Date(2024, 1, 1, 0, 3, 20, 0, time.UTC)) {
		t.Errorf("cursor until = %v", c.Until)
	}
}

func TestWebhooks_LinkCarriesResourceSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	e.subscribe(topic, r.url("/cb"), "")
	rec := wire.Record{Topic: topic, Channel: "feed", ContentType: "application/xml", Body: []byte("<urlset/>"),
		ResourceSync: "https://source.example/capabilitylist.xml"}
	if _, _, err := e.log.Append(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return r.count() == 1 })
	want := `<` + topic + `>; rel="self", <` + testHubURL + `>; rel="hub", <https://source.example/capabilitylist.xml>; rel="resourcesync"`
	if got := r.all()[0].Header.Values("Link"); len(got) != 1 || got[0] != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
}

func TestWebhooks_SignsWithEachMethod(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"sha1", "sha256", "sha384", "sha512"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channel(topic, "feed")
			const secret = "s3cret-" + "value"
			r := newReceiver(t, func(_ int, d delivery) int {
				sig := d.Header.Get(wire.HeaderSignature)
				if !strings.HasPrefix(sig, method+"=") || wire.Verify(sig, secret, []byte(d.Body)) != nil {
					return http.StatusForbidden
				}
				return http.StatusNoContent
			})
			sub := e.subscribe(topic, r.url("/cb"), secret)
			seqs := e.publish(topic, "feed", 0, 3)
			cfg := e.fastConfig()
			cfg.SigMethod = method
			e.start(cfg)
			testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })
			if n := r.count(); n != 3 {
				t.Fatalf("%d requests, want 3 accepted at the first try", n)
			}
			if dl := e.deadLetters(sub.ID); len(dl) != 0 {
				t.Fatalf("dead letters: %+v", dl)
			}
		})
	}
}

func TestWebhooks_RetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(n int, _ delivery) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 2)
	cfg := e.fastConfig()
	cfg.Schedule.Attempts = 10
	e.start(cfg)

	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[1] })
	want := []string{"feed-0", "feed-0", "feed-0", "feed-0", "feed-1"}
	if got := r.bodies(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("requests = %v, want %v", got, want)
	}
	if dl := e.deadLetters(sub.ID); len(dl) != 0 {
		t.Fatalf("dead letters after a successful retry: %+v", dl)
	}
}

// poisonReceiver refuses the body "feed-1" with 500 until healed.
func poisonReceiver(t *testing.T) (*receiver, func()) {
	r := newReceiver(t, nil)
	r.setRespond(func(_ int, d delivery) int {
		if d.Body == "feed-1" {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	return r, func() { r.setRespond(nil) }
}

func TestWebhooks_DeadLetterAfterExhaustionMovesCursorOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r, _ := poisonReceiver(t)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	w, _ := e.start(e.fastConfig()) // 4 attempts

	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })
	dls := e.deadLetters(sub.ID)
	if len(dls) != 1 {
		t.Fatalf("dead letters = %+v, want one", dls)
	}
	d := dls[0]
	if d.Seq != seqs[1] || d.Attempts != 4 || d.LastStatus != 500 || d.SubID != sub.ID || !strings.Contains(d.Reason, "500") {
		t.Errorf("dead letter = %+v", d)
	}
	want := "feed-0,feed-1,feed-1,feed-1,feed-1,feed-2"
	if got := strings.Join(r.bodies(), ","); got != want {
		t.Errorf("requests = %s, want %s", got, want)
	}
	testenv.Eventually(t, wait, func() bool { s, _ := statsOf(w, sub.ID); return s.DeadLetters == 1 })
}

func TestWebhooks_RedriveDeliversDeadLetterAndDeletesIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r, heal := poisonReceiver(t)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	w, _ := e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })
	dls := e.deadLetters(sub.ID)
	if len(dls) != 1 {
		t.Fatalf("dead letters = %+v", dls)
	}
	ctx := context.Background()

	// Still failing: the dead letter stays.
	if err := w.Redrive(ctx, sub.ID, dls[0].ID); !errors.Is(err, ErrRedriveFailed) {
		t.Fatalf("Redrive to a failing callback = %v, want ErrRedriveFailed", err)
	}
	if n := len(e.deadLetters(sub.ID)); n != 1 {
		t.Fatalf("dead letter removed after a failed redrive (%d left)", n)
	}

	heal()
	before := r.count()
	if err := w.Redrive(ctx, sub.ID, dls[0].ID); err != nil {
		t.Fatalf("Redrive: %v", err)
	}
	all := r.all()
	if len(all) != before+1 || all[len(all)-1].Body != "feed-1" {
		t.Fatalf("redrive did not deliver feed-1: %v", r.bodies())
	}
	if n := len(e.deadLetters(sub.ID)); n != 0 {
		t.Fatalf("%d dead letters left after redrive", n)
	}
	if c := e.cursor(sub.ID); c.Seq != seqs[2] {
		t.Errorf("redrive moved the cursor to %d", c.Seq)
	}
	if err := w.Redrive(ctx, sub.ID, dls[0].ID); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("second Redrive = %v, want ErrNotFound", err)
	}
	if err := w.Redrive(ctx, "nosuchsub", "x"); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("Redrive of unknown subscription = %v, want ErrNotFound", err)
	}
}

func TestWebhooks_RedriveAllInLogOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return http.StatusBadGateway })
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	cfg := e.fastConfig()
	cfg.Schedule.Attempts = 1
	w, _ := e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })
	r.setRespond(nil)
	before := r.count()
	n, err := w.RedriveAll(context.Background(), sub.ID)
	if err != nil || n != 3 {
		t.Fatalf("RedriveAll = %d, %v", n, err)
	}
	if got := strings.Join(r.bodies()[before:], ","); got != "feed-0,feed-1,feed-2" {
		t.Fatalf("redriven = %s", got)
	}
	if dl := e.deadLetters(sub.ID); len(dl) != 0 {
		t.Fatalf("left: %+v", dl)
	}
}

func TestWebhooks_GoneEndsSubscription(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return http.StatusGone })
	sub := e.subscribe(topic, r.url("/cb"), "")
	e.publish(topic, "feed", 0, 3)
	w, _ := e.start(e.fastConfig())

	testenv.Eventually(t, wait, func() bool {
		_, err := e.store.Subscription(context.Background(), sub.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "subscription deleted")
	testenv.Eventually(t, wait, func() bool { _, ok := statsOf(w, sub.ID); return !ok }, "queue stopped")
	if n := r.count(); n != 1 {
		t.Errorf("%d requests, want 1 (410 ends the subscription)", n)
	}
}

func TestWebhooks_CircuitBreakerOpensForFailingHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return http.StatusServiceUnavailable })
	subA := e.subscribe(topic, r.url("/a"), "")
	subB := e.subscribe(topic, r.url("/b"), "") // same host
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: time.Millisecond, Multiplier: 1, Attempts: 50, MaxElapsed: 30 * time.Second}
	cfg.Breaker = BreakerConfig{Failures: 3, CoolDown: time.Hour}
	cfg.PerHost = 1
	w, _ := e.start(cfg)

	// Three failures open the circuit; both subscriptions are then held
	// back and give up within MaxElapsed without another request.
	testenv.Eventually(t, wait, func() bool {
		return e.cursor(subA.ID).Seq == seqs[0] && e.cursor(subB.ID).Seq == seqs[0]
	}, "both subscriptions moved on")
	if n := r.count(); n != 3 {
		t.Errorf("host got %d requests, want 3 before the circuit opened", n)
	}
	for _, id := range []string{subA.ID, subB.ID} {
		dls := e.deadLetters(id)
		if len(dls) != 1 || !strings.Contains(dls[0].Reason, "circuit open") {
			t.Errorf("dead letters of %s = %+v, want one naming the open circuit", id, dls)
		}
		s, ok := statsOf(w, id)
		if !ok || s.HostBreaker != "open" {
			t.Errorf("stats of %s = %+v, want host breaker open", id, s)
		}
	}
}

func TestWebhooks_FailingSubscriberDoesNotDelayHealthyOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	release := make(chan struct{})
	slow := newReceiver(t, func(int, delivery) int { <-release; return http.StatusInternalServerError })
	t.Cleanup(func() { close(release) }) // before the servers close (LIFO)
	failing := newReceiver(t, func(int, delivery) int { return http.StatusInternalServerError })
	healthy := newReceiver(t, nil)
	e.subscribe(topic, slow.url("/cb"), "")
	failSub := e.subscribe(topic, failing.url("/cb"), "")
	okSub := e.subscribe(topic, healthy.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 50)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: 20 * time.Millisecond, Multiplier: 1, Attempts: 1000}
	cfg.Breaker = BreakerConfig{Failures: 2, CoolDown: time.Hour}
	w, _ := e.start(cfg)

	testenv.Eventually(t, wait, func() bool { return e.cursor(okSub.ID).Seq == seqs[49] }, "healthy subscriber served")
	if got := healthy.bodies(); len(got) != 50 || got[0] != "feed-0" || got[49] != "feed-49" {
		t.Fatalf("healthy got %d deliveries", len(got))
	}
	if c := e.cursor(failSub.ID); c.Seq != 0 {
		t.Errorf("failing subscriber's cursor moved to %d", c.Seq)
	}
	testenv.Eventually(t, wait, func() bool { // its first attempt may still be under way
		s, _ := statsOf(w, failSub.ID)
		return s.State == StateCircuitOpen || s.State == StateFailing
	}, "failing subscriber reported failing")
	if s, _ := statsOf(w, okSub.ID); s.State != StateActive || s.ConsecutiveFailures != 0 {
		t.Errorf("healthy subscriber stats = %+v", s)
	}
}

func TestWebhooks_PreservesCallbackQuery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	const q = "token=a%20b&x=1&x=2&empty="
	e.subscribe(topic, r.url("/hooks/rs?"+q), "")
	e.publish(topic, "feed", 0, 1)
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return r.count() == 1 })
	d := r.all()[0]
	if d.Path != "/hooks/rs" || d.Query != q {
		t.Errorf("request to %s?%s, want /hooks/rs?%s", d.Path, d.Query, q)
	}
}

func TestWebhooks_RedirectIsAFailureNotFollowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(_ int, d delivery) int {
		if d.Path == "/moved" {
			t.Error("redirect followed")
		}
		return http.StatusOK
	})
	redirector := httptest.NewServer(http.RedirectHandler(r.url("/moved"), http.StatusFound))
	t.Cleanup(redirector.Close)
	sub := e.subscribe(topic, redirector.URL+"/cb", "")
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Schedule.Attempts = 2
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[0] })
	dls := e.deadLetters(sub.ID)
	if len(dls) != 1 || dls[0].LastStatus != http.StatusFound || dls[0].Attempts != 2 {
		t.Fatalf("dead letters = %+v, want one after two 302s", dls)
	}
	if n := r.count(); n != 0 {
		t.Fatalf("redirect target got %d requests", n)
	}
}

func TestWebhooks_DefaultPolicyRefusesLoopbackCallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { t.Error("loopback callback reached"); return 200 })
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Client = netguard.NewClient(netguard.Policy{}, netguard.Timeouts{})
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[0] })
	dls := e.deadLetters(sub.ID)
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "netguard") || !strings.Contains(dls[0].Reason, "loopback") ||
		dls[0].LastStatus != 0 {
		t.Fatalf("dead letters = %+v, want one with a netguard loopback reason", dls)
	}
}

func TestWebhooks_BadCallbackSchemeDeadLettersAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	sub := e.subscribe(topic, "ftp://127.0.0.1/cb", "")
	seqs := e.publish(topic, "feed", 0, 1)
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[0] })
	if dls := e.deadLetters(sub.ID); len(dls) != 1 || dls[0].Attempts != 1 || !strings.Contains(dls[0].Reason, "scheme") {
		t.Fatalf("dead letters = %+v", dls)
	}
}

func TestWebhooks_SubscriptionWithoutChannelNameFiltersByTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	e.channel("https://other.example/cl.xml", "other")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	sub.Channel = "" // stored by an older hub
	if err := e.store.PutSubscription(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for i := 0; i < 10; i++ {
		e.publish("https://other.example/cl.xml", "other", i, 2)
		seqs = append(seqs, e.publish(topic, "feed", i, 1)...)
	}
	e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[9] })
	got := r.bodies()
	if len(got) != 10 {
		t.Fatalf("got %v", got)
	}
	for i, b := range got {
		if b != fmt.Sprintf("feed-%d", i) {
			t.Fatalf("delivery %d = %q", i, b)
		}
	}
}
