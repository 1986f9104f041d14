package hub_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

const openTopic = "http://127.0.0.1:1/dataset1/change/"

// WS-5, WS-16, WS-22, websub.rocks 100: a typical request gets 202 and a
// verification GET carrying mode, topic, challenge and lease.
func TestSubscribe_Accepted202ThenVerified(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	status, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	if status != http.StatusAccepted {
		t.Fatalf("status %d %q, want 202", status, body)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	reqs := cb.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d verification requests, want 1", len(reqs))
	}
	q := reqs[0]
	if q.Get("hub.mode") != "subscribe" || q.Get("hub.topic") != ch.Topic || q.Get("hub.challenge") == "" || q.Get("hub.lease_seconds") != "864000" {
		t.Fatalf("verification query %v lacks mode/topic/challenge/lease", q)
	}
	if sub.Lease != 864000 || sub.Channel != ch.Name {
		t.Fatalf("subscription %+v", sub)
	}
}

// WS-11, websub.rocks 102: parameters the hub does not know are ignored.
func TestSubscribe_IgnoresUnknownParameters(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	status, _ := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"), "foo", "bar", "hub.foo", "hub.bar"))
	if status != http.StatusAccepted {
		t.Fatalf("status %d, want 202", status)
	}
	f.WaitActive(ch.Topic, cb.URL("/cb"))
}

// WS-15: the callback's own query string is kept and the hub's parameters
// appended.
func TestSubscribe_CallbackQueryStringKept(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	callback := cb.URL("/cb?user=42&x=a%20b")
	f.PostForm(hubtest.SubscribeForm(ch.Topic, callback))
	sub := f.WaitActive(ch.Topic, callback)
	if sub.Callback != callback {
		t.Fatalf("stored callback %q, want %q", sub.Callback, callback)
	}
	q := cb.Requests()[0]
	if q.Get("user") != "42" || q.Get("x") != "a b" || q.Get("hub.challenge") == "" {
		t.Fatalf("verification query %v lost the callback's parameters", q)
	}
}

// WS-5..10, WS-17: malformed requests are refused with 4xx and a plain-text
// reason, and nothing is verified.
func TestSubscribe_BadRequestsRefused(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	long := strings.Repeat("s", 200)
	cases := []struct {
		name string
		form url.Values
		want string
	}{
		{"missing callback", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {ch.Topic}}, "hub.callback is required"},
		{"missing topic", url.Values{"hub.mode": {"subscribe"}, "hub.callback": {cb.URL("/")}}, "hub.topic is required"},
		{"bad mode", hubtest.SubscribeForm(ch.Topic, cb.URL("/"), "hub.mode", "x"), "hub.mode"},
		{"relative callback", hubtest.SubscribeForm(ch.Topic, "/cb"), "hub.callback"},
		{"ftp callback", hubtest.SubscribeForm(ch.Topic, "ftp://127.0.0.1/cb"), "hub.callback"},
		{"secret of 200 bytes", hubtest.SubscribeForm(ch.Topic, cb.URL("/"), "hub.secret", long), "less than 200 bytes"},
		{"negative lease", hubtest.SubscribeForm(ch.Topic, cb.URL("/"), "hub.lease_seconds", "-5"), "positive decimal integer"},
		{"lease not a number", hubtest.SubscribeForm(ch.Topic, cb.URL("/"), "hub.lease_seconds", "10d"), "positive decimal integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// "bad mode" has two hub.mode values; Get takes the first, so set it
			if tc.name == "bad mode" {
				tc.form.Set("hub.mode", "x")
			}
			status, body := f.PostForm(tc.form)
			if status < 400 || status > 499 || !strings.Contains(body, tc.want) {
				t.Fatalf("got %d %q, want 4xx mentioning %q", status, body, tc.want)
			}
		})
	}
	if n := cb.Count.Load(); n != 0 {
		t.Fatalf("%d verification requests for refused subscriptions", n)
	}
}

// A secret of 199 bytes is within WebSub's bound.
func TestSubscribe_Secret199BytesAccepted(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	status, _ := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"), "hub.secret", strings.Repeat("s", 199)))
	if status != http.StatusAccepted {
		t.Fatalf("status %d, want 202", status)
	}
	if sub := f.WaitActive(ch.Topic, cb.URL("/cb")); len(sub.Secret) != 199 {
		t.Fatalf("secret of %d bytes stored", len(sub.Secret))
	}
}

// RSN-22, WS-25: requested leases are clamped to the configured bounds.
func TestSubscribe_LeaseClampedToPolicy(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	for _, tc := range []struct{ ask, want string }{{"10", "300"}, {"999999999", "2678400"}, {"3600", "3600"}} {
		callback := cb.URL("/cb" + tc.ask)
		f.PostForm(hubtest.SubscribeForm(ch.Topic, callback, "hub.lease_seconds", tc.ask))
		sub := f.WaitActive(ch.Topic, callback)
		if got := sub.Lease; got != mustInt(tc.want) {
			t.Errorf("asked %s, granted %d, want %s", tc.ask, got, tc.want)
		}
	}
}

// WS-24: only a 2xx whose body is exactly the challenge counts.
func TestVerify_OnlyExactChallengeWith2xxCounts(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cases := []struct {
		name  string
		reply func(q url.Values) (int, string)
	}{
		{"wrong body", func(url.Values) (int, string) { return 200, "nope" }},
		{"challenge with newline", func(q url.Values) (int, string) { return 200, q.Get("hub.challenge") + "\n" }},
		{"404", func(url.Values) (int, string) { return 404, "" }},
		{"500 with challenge", func(q url.Values) (int, string) { return 500, q.Get("hub.challenge") }},
		{"redirect", func(q url.Values) (int, string) { return 302, q.Get("hub.challenge") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cb := hubtest.NewCallback(t)
			cb.SetReply(tc.reply)
			f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
			testenv.Eventually(t, 10*time.Second, func() bool { return cb.Count.Load() == 1 }, "no verification request")
			// the verification result is applied right after the GET; a
			// later subscribe on a healthy callback proves the worker moved on
			ok := hubtest.NewCallback(t)
			f.PostForm(hubtest.SubscribeForm(ch.Topic, ok.URL("/ok")))
			f.WaitActive(ch.Topic, ok.URL("/ok"))
			if _, err := f.Store.Subscription(context.Background(), hub.SubscriptionID(ch.Topic, cb.URL("/cb"))); !errors.Is(err, hub.ErrNotFound) {
				t.Fatalf("subscription stored despite failed verification (err %v)", err)
			}
		})
	}
}

// WS-13, websub.rocks 103: re-subscribing replaces the state of the same
// (topic, callback) only after verification; there is still one subscription.
func TestSubscribe_ResubscribeReplacesAfterVerify(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	callback := cb.URL("/cb")
	f.PostForm(hubtest.SubscribeForm(ch.Topic, callback, "hub.lease_seconds", "3600", "hub.secret", "old-secret"))
	first := f.WaitActive(ch.Topic, callback)

	// a renewal whose verification fails leaves the old state alone
	cb.SetReply(func(url.Values) (int, string) { return 404, "" })
	f.PostForm(hubtest.SubscribeForm(ch.Topic, callback, "hub.lease_seconds", "7200", "hub.secret", "evil"))
	testenv.Eventually(t, 10*time.Second, func() bool { return cb.Count.Load() == 2 })
	probe := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, probe.URL("/p")))
	f.WaitActive(ch.Topic, probe.URL("/p"))
	s, _ := f.Store.Subscription(context.Background(), first.ID)
	if s.Secret != "old-secret" || s.Lease != 3600 {
		t.Fatalf("failed renewal changed state: %+v", s)
	}

	// a verified renewal replaces it
	cb.SetReply(nil)
	f.Clock.Advance(time.Minute)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, callback, "hub.lease_seconds", "7200", "hub.secret", "new-secret"))
	testenv.Eventually(t, 10*time.Second, func() bool {
		s, _ := f.Store.Subscription(context.Background(), first.ID)
		return s.Lease == 7200
	})
	s, _ = f.Store.Subscription(context.Background(), first.ID)
	if s.Secret != "new-secret" || !s.Expires.After(first.Expires) || s.StartSeq != first.StartSeq {
		t.Fatalf("renewal: %+v (first %+v)", s, first)
	}
	subs, _ := f.Store.Subscriptions(context.Background(), ch.Topic)
	n := 0
	for _, x := range subs {
		if x.Callback == callback {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d subscriptions for one (topic, callback), want 1", n)
	}
}

// WS-34, websub.rocks 104: unsubscribe is verified with hub.mode=unsubscribe,
// then the subscription is gone and delivery stops.
func TestUnsubscribe_VerifiedThenRemoved(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	callback := cb.URL("/cb")
	f.PostForm(hubtest.SubscribeForm(ch.Topic, callback))
	sub := f.WaitActive(ch.Topic, callback)
	form := hubtest.SubscribeForm(ch.Topic, callback)
	form.Set("hub.mode", "unsubscribe")
	if status, _ := f.PostForm(form); status != http.StatusAccepted {
		t.Fatalf("unsubscribe status %d, want 202", status)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := f.Store.Subscription(context.Background(), sub.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "subscription not removed")
	reqs := cb.Requests()
	if last := reqs[len(reqs)-1]; last.Get("hub.mode") != "unsubscribe" || last.Get("hub.challenge") == "" {
		t.Fatalf("unsubscribe verification %v", last)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		d := f.Active.Deactivated()
		return len(d) > 0 && d[len(d)-1] == sub.ID
	}, "delivery not told to stop")
}

// WS-20: a subscription the hub's policy refuses gets hub.mode=denied with
// the topic and a reason.
func TestSubscribe_UnknownTopicDenied(t *testing.T) {
	f := newFixture(t)
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm("http://127.0.0.1:1/unknown", cb.URL("/cb")))
	testenv.Eventually(t, 10*time.Second, func() bool { return cb.Count.Load() == 1 })
	q := cb.Requests()[0]
	if q.Get("hub.mode") != "denied" || q.Get("hub.topic") != "http://127.0.0.1:1/unknown" || q.Get("hub.reason") == "" {
		t.Fatalf("denial query %v", q)
	}
}

// WS-25: leases end; the sweeper expires the subscription and stops delivery.
func TestLease_ExpiresAndStopsDelivery(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"), "hub.lease_seconds", "300"))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	f.Clock.Advance(301 * time.Second)
	f.Hub.SweepOnce(context.Background())
	s, err := f.Store.Subscription(context.Background(), sub.ID)
	if err != nil || s.State != hub.SubExpired {
		t.Fatalf("after lease end: %+v, %v", s, err)
	}
}

// With OpenTopics a subscription to an unknown topic creates an open channel.
func TestSubscribe_OpenTopicsCreatesChannel(t *testing.T) {
	f := newFixture(t, func(c *hub.Config) { c.OpenTopics = true })
	cb := hubtest.NewCallback(t)
	topic := "http://127.0.0.1:1/anything"
	f.PostForm(hubtest.SubscribeForm(topic, cb.URL("/cb")))
	f.WaitActive(topic, cb.URL("/cb"))
	ch, err := f.Store.Channel(context.Background(), topic)
	if err != nil || ch.Trust != hub.TrustOpen {
		t.Fatalf("channel %+v, %v", ch, err)
	}
}

func mustInt(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

// A notification published while the verification request is in flight
// (the subscriber may count itself subscribed once it echoes the
// challenge) is within the subscription.
func TestSubscribe_StartsBeforeVerificationRequest(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	var seq string
	cb.SetReply(func(q url.Values) (int, string) {
		status, body := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
		if status != 200 {
			t.Errorf("publish during verification: %d %q", status, body)
		}
		seq = strings.TrimSpace(strings.TrimPrefix(body, "stored seq "))
		return 200, q.Get("hub.challenge")
	})
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	if fmt.Sprint(sub.StartSeq) != seq {
		t.Fatalf("subscription starts at seq %d; the notification published during verification was seq %s", sub.StartSeq, seq)
	}
}

// WS-26: every verification carries a fresh random challenge.
func TestVerify_ChallengeIsFreshEachTime(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	for i := range 3 {
		callback := cb.URL(fmt.Sprintf("/cb%d", i))
		f.PostForm(hubtest.SubscribeForm(ch.Topic, callback))
		f.WaitActive(ch.Topic, callback)
	}
	seen := map[string]bool{}
	for _, q := range cb.Requests() {
		c := q.Get("hub.challenge")
		if len(c) < 32 || seen[c] {
			t.Fatalf("challenge %q is short or reused", c)
		}
		seen[c] = true
	}
}
