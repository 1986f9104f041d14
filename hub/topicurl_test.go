package hub_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// reasons records the reason of every refusal the hub answers.
type reasons struct {
	mu  sync.Mutex
	got []string
}

func (r *reasons) Published(string, int, time.Duration) {}
func (r *reasons) Verified(string, bool)                {}
func (r *reasons) GapRecorded(string)                   {}
func (r *reasons) Unstored(string)                      {}
func (r *reasons) Rejected(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, reason)
}

func (r *reasons) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return ""
	}
	return r.got[len(r.got)-1]
}

// A channel is created under the normal spelling of its topic (RFC 3986
// §6.2.2), and a publish naming any spelling of it reaches it: the case
// of scheme and host, the default port, percent-encoded unreserved
// characters.
func TestTopics_SpellingsOfOneURLAreOneChannel(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ created, normal, published string }{
		{"HTTP://127.0.0.1:80/x", "http://127.0.0.1/x", "http://127.0.0.1/x"},
		{"http://127.0.0.1/y", "http://127.0.0.1/y", "HTTP://127.0.0.1:80/y"},
		{"http://127.0.0.1:1/topic/%7Ealice", "http://127.0.0.1:1/topic/~alice", "http://127.0.0.1:1/topic/~alice"},
		{"http://127.0.0.1:1/topic/~bob", "http://127.0.0.1:1/topic/~bob", "http://127.0.0.1:1/topic/%7ebob"},
	} {
		ch := f.Channel(hub.Channel{Topic: c.created, Trust: hub.TrustOpen})
		if ch.Topic != c.normal {
			t.Errorf("channel created for %q has topic %q, want %q", c.created, ch.Topic, c.normal)
		}
		if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(c.published, f.URL)); status != 200 {
			t.Errorf("publish to %q, channel created for %q: %d %q", c.published, c.created, status, resp)
		}
	}
	chs, err := f.Store.Channels(context.Background())
	if err != nil || len(chs) != 4 {
		t.Fatalf("store holds %d channels (%v), want 4: one per URL", len(chs), err)
	}
}

// A subscription names its topic and callback in any spelling: it is
// stored under their normal spelling, so that an unsubscribe naming
// another spelling of the same callback removes it, and its channel is
// the one a publish in another spelling reaches.
func TestSubscribe_UnsubscribeAnotherSpellingOfTheCallback(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: "http://127.0.0.1:1/topic/~alice", Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	if status, resp := f.PostForm(hubtest.SubscribeForm("http://127.0.0.1:1/topic/%7Ealice", cb.URL("/k1%7Ex"))); status != 202 {
		t.Fatalf("subscribe: %d %q", status, resp)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/k1~x"))
	if sub.Channel != ch.Name || sub.Callback != cb.URL("/k1~x") || sub.Topic != ch.Topic {
		t.Fatalf("subscription %+v, want channel %s, callback %s", sub, ch.Name, cb.URL("/k1~x"))
	}
	form := hubtest.SubscribeForm("HTTP://127.0.0.1:1/topic/~alice", cb.URL("/k1~x"))
	form.Set("hub.mode", "unsubscribe")
	if status, resp := f.PostForm(form); status != 202 {
		t.Fatalf("unsubscribe: %d %q", status, resp)
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err := f.Store.Subscription(context.Background(), sub.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "unsubscribing %s left %s subscribed", cb.URL("/k1~x"), cb.URL("/k1%7Ex"))
}

// A subscription stored before topics and callbacks were normalised, under
// the ID of their own spelling, is removed by an unsubscribe in that
// spelling; a channel stored so is found by any spelling, keeps its own,
// and is not taken by a definition naming it in the normal spelling.
func TestTopics_StoredInAnotherSpellingStillFound(t *testing.T) {
	f, _ := privateFixture(t) // the channel is made private below: the hub must verify subscriber tokens
	ctx := context.Background()
	legacy := hub.Channel{Name: "legacy", Topic: "http://127.0.0.1:1/legacy/%7ebob", Trust: hub.TrustOpen, Created: time.Now().UTC()}
	if err := f.Store.PutChannel(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links("http://127.0.0.1:1/legacy/~bob", f.URL)); status != 200 {
		t.Fatalf("publish to the normal spelling of a channel stored in another: %d %q", status, resp)
	}
	ch, err := f.Hub.PutChannel(ctx, hub.Channel{Name: "legacy", Topic: "http://127.0.0.1:1/legacy/~bob", Trust: hub.TrustOpen})
	if err != nil || ch.Topic != legacy.Topic {
		t.Fatalf("redefining it in the normal spelling: %+v, %v; want topic %s kept", ch, err, legacy.Topic)
	}
	if chs, err := f.Store.Channels(ctx); err != nil || len(chs) != 1 {
		t.Fatalf("store holds %d channels (%v), want 1", len(chs), err)
	}

	cb := hubtest.NewCallback(t)
	old := hub.Subscription{ID: hub.SubscriptionID(legacy.Topic, cb.URL("/K%7e")), Topic: legacy.Topic, Channel: "legacy",
		Callback: cb.URL("/K%7e"), State: hub.SubActive, Lease: 3600, Expires: time.Now().Add(time.Hour)}
	if err := f.Store.PutSubscription(ctx, old); err != nil {
		t.Fatal(err)
	}
	form := hubtest.SubscribeForm(legacy.Topic, cb.URL("/K%7e"))
	form.Set("hub.mode", "unsubscribe")
	if status, resp := f.PostForm(form); status != 202 {
		t.Fatalf("unsubscribe: %d %q", status, resp)
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err := f.Store.Subscription(ctx, old.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "the subscription stored under its own spelling stayed")

	// subscribed since in the normal spelling, without a token: made
	// private, the channel ends that subscription too
	if status, resp := f.PostForm(hubtest.SubscribeForm("http://127.0.0.1:1/legacy/~bob", cb.URL("/new"))); status != 202 {
		t.Fatalf("subscribe: %d %q", status, resp)
	}
	sub := f.WaitActive("http://127.0.0.1:1/legacy/~bob", cb.URL("/new"))
	if sub.Channel != "legacy" {
		t.Fatalf("subscription to channel %q, want legacy", sub.Channel)
	}
	legacy.Private = true
	f.Channel(legacy)
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, err := f.Store.Subscription(ctx, sub.ID)
		return errors.Is(err, hub.ErrNotFound)
	}, "a subscription without a token stayed on the channel made private")
}

// A topic holding a byte that is not UTF-8 is the client's error: 400
// with reason topic at every door of the hub URL, not an outage of the
// state store.
func TestTopics_NotUTF8IsTheClientsError(t *testing.T) {
	rs := &reasons{}
	f := newFixture(t, func(c *hub.Config) { c.Observer = rs; c.OpenTopics = true })
	bad := "http://127.0.0.1:1/\xff"
	cb := hubtest.NewCallback(t)
	for _, c := range []struct {
		name string
		do   func() (int, string)
	}{
		{"subscribe", func() (int, string) { return f.PostForm(hubtest.SubscribeForm(bad, cb.URL("/"))) }},
		{"thin ping", func() (int, string) { return f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {bad}}) }},
		{"fat ping", func() (int, string) {
			return f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(bad, f.URL))
		}},
	} {
		status, resp := c.do()
		if status != 400 || rs.last() != "topic" || !strings.Contains(resp, "UTF-8") {
			t.Errorf("%s: %d %q, reason %q; want 400, reason topic", c.name, status, resp, rs.last())
		}
	}
}
