package hub_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// logLines records the messages a hub logs.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}

func (l *logLines) has(prefix string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}

// topicServer serves text at every path, as a Source's topic would.
func topicServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "content of "+r.URL.Path+"\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// On an --open-topics hub a private channel is, to a caller without a
// grant, a topic the hub does not serve yet: a subscription to it gets a
// verification of intent as a new topic's does (not a denial), a thin
// ping the same answer as a new topic's first, a fat ping the same 404;
// and no channel shadowing the private one is created, no subscription
// stored.
func TestOpenTopics_PrivateChannelAnswersAsAnUnknownTopic(t *testing.T) {
	f, _ := privateFixture(t, func(c *hub.Config) { c.OpenTopics = true })
	src := topicServer(t)
	ch := f.Channel(hub.Channel{Topic: src.URL + "/private/", Trust: hub.TrustOpen, Private: true})
	unknown := src.URL + "/unknown/"
	anon := func(s, topic string) string { // the answer without the topic and the sequence
		return regexp.MustCompile(`[0-9]+`).ReplaceAllString(strings.ReplaceAll(s, topic, "T"), "N")
	}

	us, ub := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {unknown + "a"}})
	ps, pb := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
	if us != 200 || ps != us || anon(pb, ch.Topic) != anon(ub, unknown+"a") {
		t.Errorf("thin ping: private %d %q, unknown %d %q: want the same answer", ps, pb, us, ub)
	}
	us, ub = f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(unknown+"b", f.URL))
	ps, pb = f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	if us != 404 || ps != us || anon(pb, ch.Topic) != anon(ub, unknown+"b") {
		t.Errorf("fat ping: private %d %q, unknown %d %q: want the same 404", ps, pb, us, ub)
	}

	cb := hubtest.NewCallback(t)
	for _, topic := range []string{unknown + "c", ch.Topic} {
		if status, resp := f.PostForm(hubtest.SubscribeForm(topic, cb.URL("/"+url.PathEscape(topic)))); status != 202 {
			t.Fatalf("subscribe to %s: %d %q", topic, status, resp)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() bool { return cb.Count.Load() == 2 }, "two verifications")
	for _, q := range cb.Requests() {
		if q.Get("hub.mode") != "subscribe" || q.Get("hub.challenge") == "" || q.Get("hub.lease_seconds") == "" {
			t.Errorf("to the callback for %s: %v; want a verification of intent", q.Get("hub.topic"), q)
		}
	}
	f.WaitActive(unknown+"c", cb.URL("/"+url.PathEscape(unknown+"c")))
	ctx := context.Background()
	if subs, err := f.Store.Subscriptions(ctx, ch.Topic); err != nil || len(subs) != 0 {
		t.Errorf("the private channel holds subscriptions %v (%v), want none", subs, err)
	}
	chs, err := f.Store.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chs {
		if c.Topic == ch.Topic && c.Name != ch.Name || c.Name == ch.Name && !c.Private {
			t.Errorf("channel %+v shadows the private one", c)
		}
	}
	if len(chs) != 3 { // the private one, unknown a and c (a fat ping creates none)
		t.Errorf("store holds %d channels, want 3", len(chs))
	}
}

// A subscribe request naming another subscriber's callback for a private
// topic, without a grant, is denied only for what it asked: the callback,
// which holds an active subscription to the topic, is sent no
// hub.mode=denied (nor, on an --open-topics hub, a verification), and its
// subscription stays.
func TestSubscribe_DeniedOnlyWhatTheRequestAsked(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(map[bool]string{false: "closed hub", true: "open topics"}[open], func(t *testing.T) {
			logs := &logLines{}
			f, k := privateFixture(t, func(c *hub.Config) { c.Logger, c.OpenTopics = slog.New(logs), open })
			ch := f.Channel(hub.Channel{Topic: privateTopic, Trust: hub.TrustOpen, Private: true})
			cb := hubtest.NewCallback(t)
			tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{ch.Topic}, nil, hour(), 0))
			if status, resp := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/owner")), bearer(tok)...); status != 202 {
				t.Fatalf("owner: %d %q", status, resp)
			}
			sub := f.WaitActive(ch.Topic, cb.URL("/owner"))
			if status, resp := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/owner"))); status != 202 {
				t.Fatalf("someone else: %d %q", status, resp)
			}
			testenv.Eventually(t, 30*time.Second, func() bool {
				return cb.Count.Load() > 1 || logs.has("denial not sent") || logs.has("verification not sent")
			},
				"the request was neither answered nor dropped")
			if n := cb.Count.Load(); n != 1 {
				t.Fatalf("the owner's callback was sent %v after its own verification, while its subscription stays active", cb.Requests()[1:])
			}
			if got, err := f.Store.Subscription(context.Background(), sub.ID); err != nil || got.State != hub.SubActive || !got.Authorized {
				t.Fatalf("owner's subscription: %+v, %v", got, err)
			}
			// a callback without a subscription to the topic is answered as before
			want := map[bool]string{false: "denied", true: "subscribe"}[open]
			f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/other")))
			testenv.Eventually(t, 30*time.Second, func() bool {
				q := cb.Requests()
				return len(q) == 2 && q[1].Get("hub.mode") == want
			}, "a request for a callback without a subscription was not answered %s", want)
		})
	}
}

// Every answer of a private hosted topic is for its reader's cache only
// (Cache-Control private): the token may ride in the query string or a
// cookie, where a shared cache would not tell readers apart.
func TestPrivate_HostedTopicCachedPrivately(t *testing.T) {
	f, k := privateFixture(t)
	priv := f.Channel(hub.Channel{Name: "secret", Hosted: true, Trust: hub.TrustOpen, Private: true})
	pub := f.Channel(hub.Channel{Name: "public", Hosted: true, Trust: hub.TrustOpen})
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{priv.Topic}, nil, hour(), 0))
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{"*"}, hour(), 0))
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(priv.Topic, f.URL), bearer(writer)...); status != 200 {
		t.Fatalf("publish: %d %q", status, resp)
	}
	for _, c := range []struct {
		u, method, want string
		status          int
	}{
		{priv.Topic + "?authorization=" + tok, http.MethodGet, "private", 200},
		{priv.Topic + "?authorization=" + tok, http.MethodHead, "private", 200},
		{pub.Topic, http.MethodGet, "no-cache", 204},
	} {
		req, _ := http.NewRequest(c.method, c.u, nil)
		status, _, h := hubtest.DoHeader(t, req)
		if cc := h.Get("Cache-Control"); status != c.status || !strings.Contains(cc, c.want) || (c.want != "private" && strings.Contains(cc, "private")) {
			t.Errorf("%s %s: %d Cache-Control %q, want %d %q", c.method, c.u, status, cc, c.status, c.want)
		}
	}
}

// A request to the hub URL that the mercureAuthorization cookie authorises
// must come from a page of the hub's origin or of CookieOrigins (403
// origin otherwise: a page elsewhere could make its visitor's browser post
// a form); a Bearer token is not a browser's to add and passes from any
// origin.
func TestPrivate_CookieAuthorisesOnlyFromAllowedOrigins(t *testing.T) {
	rs := &reasons{}
	f, k := privateFixture(t, func(c *hub.Config) {
		c.Observer = rs
		c.CookieOrigins = []string{"https://app.example", "*"}
	})
	ch := f.Channel(hub.Channel{Topic: privateTopic, Trust: hub.TrustOpen, Private: true})
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, []string{"*"}, hour(), 0))
	cookie := "mercureAuthorization=" + writer
	from, until := t0, t1
	publish := func(hdr ...string) (int, string) {
		from, until = until, hubtest.MustTime(until).Add(time.Minute).Format(time.RFC3339)
		return f.PostXML(hubtest.Notif("change-notification", from, until), hubtest.Links(ch.Topic, f.URL), hdr...)
	}
	for _, c := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"cookie from another site", []string{"Cookie", cookie, "Origin", "https://evil.example"}, 403},
		{"cookie from another site, as a Referer", []string{"Cookie", cookie, "Referer", "https://evil.example/page"}, 403},
		{"cookie from an opaque origin", []string{"Cookie", cookie, "Origin", "null"}, 403},
		{"cookie without an origin", []string{"Cookie", cookie}, 403},
		{"cookie from the hub's origin", []string{"Cookie", cookie, "Origin", f.Server.URL}, 200},
		{"cookie from a --ws-origins page", []string{"Cookie", cookie, "Origin", "HTTPS://APP.example:443"}, 200},
		{"cookie with a Referer of the hub", []string{"Cookie", cookie, "Referer", f.Server.URL + "/dashboard/"}, 200},
		{"bearer from another site", []string{"Authorization", "Bearer " + writer, "Origin", "https://evil.example"}, 200},
	} {
		status, resp := publish(c.hdr...)
		if status != c.status || (status == 403 && rs.last() != "origin") {
			t.Errorf("%s: %d %q (reason %q), want %d", c.name, status, resp, rs.last(), c.status)
		}
	}
	cb := hubtest.NewCallback(t)
	if status, resp := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/x")), "Cookie", cookie, "Origin", "https://evil.example"); status != 403 || rs.last() != "origin" {
		t.Errorf("subscribe with the cookie from another site: %d %q, want 403 origin", status, resp)
	}
}

// An --open-topics hub that holds --max-open-channels channels refuses a
// thin ping to a topic it does not know, and so it refuses one to a private
// channel from a caller without a grant: the same 503.
func TestOpenTopics_PrivateChannelRefusedAsAnUnknownTopicWhenFull(t *testing.T) {
	f, _ := privateFixture(t, func(c *hub.Config) { c.OpenTopics, c.MaxOpenChannels = true, 1 })
	src := topicServer(t)
	ch := f.Channel(hub.Channel{Topic: src.URL + "/private/", Trust: hub.TrustOpen, Private: true})
	us, ub := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {src.URL + "/unknown/"}})
	ps, pb := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
	if us != 503 || ps != us || strings.ReplaceAll(pb, ch.Topic, "T") != strings.ReplaceAll(ub, src.URL+"/unknown/", "T") {
		t.Fatalf("thin ping to a full hub: private %d %q, unknown %d %q: want the same 503", ps, pb, us, ub)
	}
}
