package hub_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

const privateTopic = "http://127.0.0.1:1/private/"

// privateFixture is a hub whose subscriber and publisher tokens are signed
// with one HMAC secret, and tokens minted outside Go for it.
func privateFixture(t *testing.T, opts ...fixtureOpt) (*fixture, *accesstest.Keys) {
	k := accesstest.NewSecret(t)
	v := k.Verifier(t)
	f := newFixture(t, append([]fixtureOpt{func(c *hub.Config) { c.Subscribers, c.Publishers = v, v }}, opts...)...)
	return f, k
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func hour() int64 { return time.Now().Add(time.Hour).Unix() }

// A private channel takes a fat ping only from its own token or a
// publisher token whose mercure.publish covers its topic; without a token
// it answers as for a topic the hub does not serve, a bad token gets 401
// with an RFC 6750 challenge (for an unknown topic too), a token without
// the claim 403 naming it.
func TestPrivate_FatPingNeedsPublishClaim(t *testing.T) {
	f, k := privateFixture(t)
	ch := f.Channel(hub.Channel{Topic: privateTopic, Trust: hub.TrustOpen, Private: true})
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, hour(), 0))
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{"http://127.0.0.1:1/{path}/"}, hour(), 0))
	expired := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{"*"}, time.Now().Add(-time.Hour).Unix(), 0))
	body := hubtest.Notif("change-notification", t0, t1)
	unknown := "http://127.0.0.1:1/none/"
	us, ub := f.PostXML(body, hubtest.Links(unknown, f.URL))
	ps, pb := f.PostXML(body, hubtest.Links(ch.Topic, f.URL))
	if us != 404 || ps != 404 || strings.ReplaceAll(ub, unknown, ch.Topic) != pb {
		t.Fatalf("without a token: private %d %q, unknown %d %q: want the same 404", ps, pb, us, ub)
	}
	for _, c := range []struct {
		name, tok, topic string
		status           int
		challenge        string
	}{
		{"expired token", expired, ch.Topic, 401, `error="invalid_token", error_description="the token has expired"`},
		{"garbage token", "x.y.z", ch.Topic, 401, `error="invalid_token"`},
		{"garbage token, unknown topic", "x.y.z", unknown, 401, `error="invalid_token"`},
		{"subscribe claim only", reader, ch.Topic, 403, `error="insufficient_scope", error_description="the token grants no publish on this channel's topic (neither its mercure.publish claim`},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		for _, l := range hubtest.Links(c.topic, f.URL) {
			req.Header.Add("Link", l)
		}
		req.Header.Set("Authorization", "Bearer "+c.tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(resp.Header.Get("WWW-Authenticate"), c.challenge) {
			t.Errorf("%s: %d %q, want %d %q", c.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), c.status, c.challenge)
		}
	}
	if f.LastSeq() != 0 {
		t.Fatal("a refused publish was stored")
	}
	if status, resp := f.PostXML(body, hubtest.Links(ch.Topic, f.URL), bearer(writer)...); status != 200 {
		t.Fatalf("publisher token: %d %q", status, resp)
	}
	tokCh := f.Channel(hub.Channel{Topic: privateTopic + "t/", Token: "a-token-of-16-chars-or-more", Private: true})
	if status, resp := f.PostXML(body, hubtest.Links(tokCh.Topic, f.URL), bearer("a-token-of-16-chars-or-more")...); status != 200 {
		t.Fatalf("the channel's own token: %d %q", status, resp)
	}
}

// A thin ping to a private channel without a token is answered as for an
// unknown topic, before anything (a followed Source) gives it away.
func TestPrivate_ThinPingHidesTheChannel(t *testing.T) {
	f, k := privateFixture(t)
	ch := f.Channel(hub.Channel{Topic: privateTopic, Follow: "http://127.0.0.1:1/private/capabilitylist.xml", Private: true})
	unknown := "http://127.0.0.1:1/none/"
	us, ub := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {unknown}})
	ps, pb := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
	if us != 404 || ps != 404 || strings.ReplaceAll(ub, unknown, ch.Topic) != pb {
		t.Fatalf("private %d %q, unknown %d %q: want the same 404", ps, pb, us, ub)
	}
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{ch.Topic}, hour(), 0))
	if status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}, bearer(writer)...); status != 409 {
		t.Fatalf("with a publisher token: %d %q, want the followed channel's 409", status, resp)
	}
}

// Subscribing to a private channel takes a token covering its topic:
// without one the subscription is denied as for an unknown topic, a bad
// token gets 401 and one for another topic 403 at once; a good one makes
// an authorized subscription whose lease ends with the token.
func TestPrivate_SubscribeNeedsSubscribeClaim(t *testing.T) {
	f, k := privateFixture(t)
	ch := f.Channel(hub.Channel{Topic: privateTopic, Trust: hub.TrustOpen, Private: true})
	cb := hubtest.NewCallback(t)
	if status, resp := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/none"))); status != 202 {
		t.Fatalf("without a token: %d %q, want 202 and a denial", status, resp)
	}
	f.PostForm(hubtest.SubscribeForm("http://127.0.0.1:1/unknown/", cb.URL("/unknown")))
	testenv.Eventually(t, 10*time.Second, func() bool { return cb.Count.Load() == 2 })
	reasons := map[string]string{}
	for _, q := range cb.Requests() {
		if q.Get("hub.mode") != "denied" {
			t.Fatalf("verification %v, want denials", q)
		}
		reasons[q.Get("hub.reason")] = q.Get("hub.topic")
	}
	if len(reasons) != 1 {
		t.Fatalf("denial reasons %v: a private channel must be denied as an unknown topic", reasons)
	}
	exp := time.Now().Add(30 * time.Minute).Unix()
	other := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://127.0.0.1:1/other/"}, nil, exp, 0))
	for name, c := range map[string]struct {
		hdr    []string
		status int
	}{
		"garbage token": {bearer("x.y.z"), 401},
		"other topic":   {bearer(other), 403},
		"alg none":      {bearer(k.Mint(t, "none", nil, accesstest.Mercure([]string{"*"}, nil, exp, 0))), 401},
	} {
		if status, resp := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/x")), c.hdr...); status != c.status {
			t.Errorf("%s: %d %q, want %d", name, status, resp, c.status)
		}
	}
	good := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"http://127.0.0.1:1/{p}/"}, nil, exp, 0))
	req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(hubtest.SubscribeForm(ch.Topic, cb.URL("/ok")).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "mercureAuthorization", Value: good})
	req.Header.Set("Origin", f.Server.URL) // a page of the hub's own origin: the cookie counts only there
	if status, resp := hubtest.Do(t, req); status != 202 {
		t.Fatalf("good token in the cookie: %d %q", status, resp)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/ok"))
	if !sub.Authorized || sub.Lease > 30*60 || sub.Lease < 29*60 {
		t.Fatalf("subscription %+v: want authorized with a lease ending with the token", sub)
	}
}

// A channel made private ends the subscriptions made without a token (the
// subscriber is told hub.mode=denied); authorized ones stay.
func TestPrivate_ChannelMadePrivateDeniesTokenlessSubscriptions(t *testing.T) {
	f, k := privateFixture(t)
	ch := f.Channel(hub.Channel{Topic: privateTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/public")), bearer("x.y.z")...) // a public channel ignores tokens
	f.WaitActive(ch.Topic, cb.URL("/public"))
	ch.Private = true
	ch = f.Channel(ch)
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{ch.Topic}, nil, hour(), 0))
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/token")), bearer(tok)...)
	f.WaitActive(ch.Topic, cb.URL("/token"))
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := f.Store.Subscription(context.Background(), hub.SubscriptionID(ch.Topic, cb.URL("/public")))
		return err != nil
	}, "the tokenless subscription was kept")
	testenv.Eventually(t, 10*time.Second, func() bool {
		for _, q := range cb.Requests() {
			if q.Get("hub.mode") == "denied" {
				return true
			}
		}
		return false
	}, "the tokenless subscriber was not told")
	f.Channel(ch) // saving a private channel again keeps the authorized subscriptions
	if _, err := f.Store.Subscription(context.Background(), hub.SubscriptionID(ch.Topic, cb.URL("/token"))); err != nil {
		t.Fatalf("authorized subscription: %v", err)
	}
}

// A private hosted topic answers 404 as an unknown one without a token,
// 401 to a bad token and its Link headers to a reader.
func TestPrivate_HostedTopicHidden(t *testing.T) {
	f, k := privateFixture(t)
	ch := f.Channel(hub.Channel{Name: "secret", Hosted: true, Trust: hub.TrustOpen, Private: true})
	get := func(u string, hdr ...string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		return hubtest.DoHeader(t, req, hdr...)
	}
	ps, pb, ph := get(ch.Topic)
	us, ub, _ := get(f.Server.URL + "/topics/none")
	if ps != 404 || us != 404 || pb != ub || ph.Get("Link") != "" {
		t.Fatalf("private %d %q %v, unknown %d %q", ps, pb, ph, us, ub)
	}
	if s, _, h := get(ch.Topic, bearer("x.y.z")...); s != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
		t.Fatalf("bad token: %d %v", s, h)
	}
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{ch.Topic}, nil, hour(), 0))
	if s, _, h := get(ch.Topic + "?authorization=" + tok); s != 204 || h.Get("Link") == "" {
		t.Fatalf("reader: %d %v", s, h)
	}
}
