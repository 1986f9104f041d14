package subscriber

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/wire"
)

const body = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="2026-01-02T10:00:00Z" until="2026-01-02T10:01:00Z"/>
<url><loc>http://s/a</loc><rs:md change="created" datetime="2026-01-02T10:00:00Z"/></url></urlset>`

// scriptedHub answers subscription requests with status and, when verify
// is set, runs it against the form in the background.
type scriptedHub struct {
	status int
	verify func(form url.Values)
	mu     sync.Mutex
	forms  []url.Values
}

func (s *scriptedHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	s.forms = append(s.forms, r.PostForm)
	s.mu.Unlock()
	if s.status != 0 {
		http.Error(w, "scripted refusal", s.status)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	if s.verify != nil {
		go s.verify(r.PostForm)
	}
}

func get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func echoVerify(t *testing.T, lease string) func(url.Values) {
	return func(form url.Values) {
		q := url.Values{"hub.mode": {form.Get("hub.mode")}, "hub.topic": {form.Get("hub.topic")}, "hub.challenge": {"ch-" + form.Get("hub.mode")}, "hub.lease_seconds": {lease}}
		resp, err := http.Get(form.Get("hub.callback") + "&" + q.Encode())
		if err == nil {
			resp.Body.Close()
		}
	}
}

type env struct {
	h         *Handler
	callbacks *httptest.Server
	hub       *httptest.Server
	got       chan *Notification
	denied    chan string
}

func newEnv(t *testing.T, hub http.Handler) *env {
	t.Helper()
	e := &env{got: make(chan *Notification, 8), denied: make(chan string, 1)}
	e.callbacks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.h.ServeHTTP(w, r) }))
	t.Cleanup(e.callbacks.Close)
	e.hub = httptest.NewServer(hub)
	t.Cleanup(e.hub.Close)
	h, err := New(Config{
		Callback:       e.callbacks.URL + "/cb",
		OnNotification: func(_ context.Context, n *Notification) error { e.got <- n; return nil },
		OnDenied:       func(_ Subscription, reason string) { e.denied <- reason },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	return e
}

func TestVerify_AnswersOnlyPendingIntents(t *testing.T) {
	var e *env
	checked := make(chan struct{})
	hub := &scriptedHub{}
	hub.verify = func(form url.Values) {
		defer close(checked)
		cb := form.Get("hub.callback")
		base := url.Values{"hub.topic": {form.Get("hub.topic")}, "hub.challenge": {"xyz"}, "hub.lease_seconds": {"300"}}
		wrongTopic := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"http://other/"}, "hub.challenge": {"xyz"}}
		if s, _ := get(t, cb+"&"+wrongTopic.Encode()); s != 404 {
			t.Errorf("wrong topic: %d, want 404", s)
		}
		un := url.Values{"hub.mode": {"unsubscribe"}}
		for k, v := range base {
			un[k] = v
		}
		if s, _ := get(t, cb+"&"+un.Encode()); s != 404 {
			t.Errorf("unsubscribe nobody asked for: %d, want 404", s)
		}
		other := strings.Replace(cb, "sub=", "sub=x", 1) + "&hub.mode=subscribe&" + base.Encode()
		if s, _ := get(t, other); s != 404 {
			t.Errorf("unknown subscription id: %d, want 404", s)
		}
		base.Set("hub.mode", "subscribe")
		if s, b := get(t, cb+"&"+base.Encode()); s != 200 || b != "xyz" {
			t.Errorf("pending subscribe: %d %q, want 200 xyz", s, b)
		}
		if s, _ := get(t, cb+"&"+base.Encode()); s != 404 {
			t.Errorf("challenge answered twice: %d", s)
		}
	}
	e = newEnv(t, hub)
	sub, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic", SubscribeOptions{VerifyTimeout: 5 * time.Second})
	<-checked
	if err != nil {
		t.Fatal(err)
	}
	if sub.Lease != 300*time.Second || len(sub.Secret) != 48 {
		t.Fatalf("lease %v secret %q", sub.Lease, sub.Secret)
	}
	if f := hub.forms[0]; f.Get("hub.secret") != sub.Secret || f.Get("hub.callback") != sub.Callback {
		t.Fatalf("form %v", f)
	}
}

func TestSubscribe_DeniedAndRefused(t *testing.T) {
	hub := &scriptedHub{verify: func(form url.Values) {
		q := url.Values{"hub.mode": {"denied"}, "hub.topic": {form.Get("hub.topic")}, "hub.reason": {"not on my watch"}}
		resp, err := http.Get(form.Get("hub.callback") + "&" + q.Encode())
		if err == nil {
			resp.Body.Close()
		}
	}}
	e := newEnv(t, hub)
	_, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic", SubscribeOptions{})
	if !IsDenied(err) || !strings.Contains(err.Error(), "not on my watch") {
		t.Fatalf("err = %v, want a denial with the reason", err)
	}
	hub.status, hub.verify = 400, nil
	_, err = e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic", SubscribeOptions{})
	if he, ok := err.(*HubError); !ok || he.Status != 400 || he.Reason != "scripted refusal" {
		t.Fatalf("err = %v, want HubError 400 with the reason", err)
	}
}

func TestDelivery_SignatureRules(t *testing.T) {
	e := newEnv(t, &scriptedHub{verify: echoVerify(t, "600")})
	signed, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/signed", SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	open, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/open", SubscribeOptions{NoSecret: true})
	if err != nil {
		t.Fatal(err)
	}
	post := func(callback, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, callback, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", `<http://s/signed>; rel="self", <http://h/>; rel="hub"`)
		if sig != "" {
			req.Header.Set(wire.HeaderSignature, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, m := range []string{"sha1", "sha256", "sha384", "sha512"} {
		sig, _ := wire.Sign(m, signed.Secret, []byte(body))
		if s := post(signed.Callback, sig); s != 202 {
			t.Fatalf("%s: %d", m, s)
		}
		n := <-e.got
		if !n.Signed || n.Topic != "http://s/signed" || n.Hub != "http://h/" || n.Subscription.ID != signed.ID || len(n.Document.Entries) != 1 {
			t.Fatalf("%s: notification %+v", m, n)
		}
	}
	bad, _ := wire.Sign("sha256", "not the secret", []byte(body))
	for name, sig := range map[string]string{"unsigned": "", "mis-signed": bad, "unknown method": "md5=00", "garbage": "sha256"} {
		if s := post(signed.Callback, sig); s != 202 {
			t.Fatalf("%s: %d, want 202 (discarded)", name, s)
		}
	}
	if s := post(open.Callback, ""); s != 202 {
		t.Fatalf("unsigned to a subscription without secret: %d", s)
	}
	n := <-e.got
	if n.Subscription.ID != open.ID || n.Signed {
		t.Fatalf("got %+v; the discarded deliveries must not arrive", n.Subscription)
	}
	select {
	case n := <-e.got:
		t.Fatalf("unexpected delivery %+v", n.Subscription)
	default:
	}
	if s := post(e.h.CallbackFor("nobody"), ""); s != 404 {
		t.Fatalf("delivery to an unknown subscription: %d, want 404", s)
	}
}

func TestUnsubscribe_VerifiesAndForgets(t *testing.T) {
	e := newEnv(t, &scriptedHub{verify: echoVerify(t, "600")})
	s, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/t", SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.h.Unsubscribe(context.Background(), s.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.h.Lookup(s.ID); ok {
		t.Fatal("still subscribed")
	}
}

func TestKeepAlive_RenewsBeforeLeaseEnds(t *testing.T) {
	hub := &scriptedHub{}
	hub.verify = echoVerify(t, "1")
	e := newEnv(t, hub)
	s, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/t", SubscribeOptions{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	renewals := make(chan Subscription, 8)
	go func() { _ = e.h.KeepAlive(ctx, s.ID, time.Second, func(s Subscription) { renewals <- s }) }()
	for i := range 2 {
		select {
		case r := <-renewals:
			if r.ID != s.ID || r.Secret != s.Secret {
				t.Fatalf("renewal changed id or secret: %+v", r)
			}
		case <-ctx.Done():
			t.Fatalf("renewal %d did not happen", i+1)
		}
	}
	hub.mu.Lock()
	last := hub.forms[len(hub.forms)-1]
	hub.mu.Unlock()
	if last.Get("hub.callback") != s.Callback {
		t.Fatal("renewal used another callback")
	}
}

func TestRenewAt(t *testing.T) {
	v := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for lease, want := range map[time.Duration]time.Duration{
		300 * time.Second: 225 * time.Second,
		0:                 180 * time.Hour,
		24 * time.Hour:    18 * time.Hour,
	} {
		if got := RenewAt(v, lease).Sub(v); got != want {
			t.Errorf("RenewAt(lease %v) after %v, want %v", lease, got, want)
		}
	}
}
