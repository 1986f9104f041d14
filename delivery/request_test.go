package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// referenceRequest is a delivery's POST built the plain way, with
// http.NewRequest, Header.Set and wire's signing.
func referenceRequest(t *testing.T, w *Webhooks, sub hub.Subscription, rec wire.Record) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, sub.Callback, bytes.NewReader(rec.Body))
	if err != nil {
		t.Fatal(err)
	}
	ct := rec.ContentType
	if ct == "" {
		ct = "application/xml"
	}
	h := req.Header
	h.Set("Content-Type", ct)
	h.Set("Link", wire.NotificationLinks(rec.Topic, testHubURL, rec.ResourceSync))
	h.Set("User-Agent", "rshub")
	h.Set(wire.HeaderSeq, strconv.FormatUint(rec.Seq, 10))
	if rec.TraceParent != "" {
		h.Set("traceparent", rec.TraceParent)
		if rec.TraceState != "" {
			h.Set("tracestate", rec.TraceState)
		}
	}
	if sub.Secret == "" {
		return req
	}
	scheme := sub.Scheme
	if scheme == "" {
		scheme = w.cfg.Scheme
	}
	if scheme != wire.SchemeStandard {
		sig, err := wire.Sign(w.cfg.SigMethod, sub.Secret, rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		h.Set("X-Hub-Signature", sig)
	}
	if scheme == wire.SchemeStandard || scheme == wire.SchemeBoth {
		id, now := wire.StandardMessageID(sub.ID, wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq}), w.cfg.Clock()
		sig, err := wire.SignStandard(sub.Secret, id, now, rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("webhook-signature", sig)
	}
	return req
}

func bodyOf(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A delivery's POST, built from the queue's parsed callback, is the one
// http.NewRequest, Header.Set and wire's signing make: method, URL, host,
// length, every header and signature, body, and the body sent again;
// built in its own request or, one after the other, in a requester's
// reused one (scratch), where nothing of the POST before stays.
func TestNewRequest_IsThePlainRequest(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	w := NewWebhooks(nil, nil, Config{HubURL: testHubURL, SigMethod: "sha512", Clock: func() time.Time { return now }})
	body := []byte(`<urlset><url><loc>http://example.org/r</loc></url></urlset>`)
	rec := wire.Record{Seq: 4096, Epoch: "5eed", Topic: "http://example.org/t", Body: body, ContentType: "application/rdf+xml"}
	traced := rec
	traced.TraceParent, traced.TraceState = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "rshub=1"
	linked := rec
	linked.ResourceSync, linked.ContentType = "http://example.org/capabilitylist.xml", ""
	empty := wire.Record{Seq: 1, Topic: "http://example.org/t"}
	cases := []struct {
		name string
		sub  hub.Subscription
		rec  wire.Record
	}{
		{"unsigned", hub.Subscription{ID: "a", Callback: "http://127.0.0.1:8080/cb?x=1&y=%2F"}, rec},
		{"websub", hub.Subscription{ID: "b", Callback: "https://example.org/hook", Secret: "s3cret"}, traced},
		{"standard", hub.Subscription{ID: "c", Callback: "http://example.org:/hook", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Scheme: wire.SchemeStandard}, linked},
		{"both", hub.Subscription{ID: "d", Callback: "http://[::1]:9/h", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Scheme: wire.SchemeBoth}, rec},
		{"empty body", hub.Subscription{ID: "e", Callback: "http://example.org/", Secret: "k"}, empty},
		{"both traced", hub.Subscription{ID: "f", Callback: "http://[::1]:9/h", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Scheme: wire.SchemeBoth}, traced},
		{"unsigned after signed", hub.Subscription{ID: "g", Callback: "http://127.0.0.1:9/g"}, rec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRequest(t, w, c.sub, c.rec, nil)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := newScratch(ctx)
	for _, c := range cases {
		t.Run(c.name+" in a reused request", func(t *testing.T) {
			if got := checkRequest(t, w, c.sub, c.rec, sc); got != sc.req || got.Context().Done() != ctx.Done() {
				t.Fatal("the request was not the scratch's, under its context")
			}
		})
	}
	// a build that fails (an unknown scheme, after the headers it sets
	// before signing) leaves none of the request before it to the next
	t.Run("unsigned after a failed build in a reused request", func(t *testing.T) {
		signed, unsigned := cases[len(cases)-2], cases[len(cases)-1]
		checkRequest(t, w, signed.sub, signed.rec, sc)
		bad := hub.Subscription{ID: "h", Callback: "http://127.0.0.1:9/h", Secret: "k", Scheme: "bogus"}
		to, err := targetOf(nil, bad.Callback)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.newRequest(context.Background(), to, bad, rec, sc); err == nil {
			t.Fatal("a POST signed by an unknown scheme was built")
		}
		checkRequest(t, w, unsigned.sub, unsigned.rec, sc)
	})
}

// checkRequest builds the POST of rec to sub, in sc when one is given,
// and checks it against referenceRequest's.
func checkRequest(t *testing.T, w *Webhooks, sub hub.Subscription, rec wire.Record, sc *scratch) *http.Request {
	t.Helper()
	to, err := targetOf(nil, sub.Callback)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.newRequest(context.Background(), to, sub, rec, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceRequest(t, w, sub, rec)
	if got.Method != want.Method || got.URL.String() != want.URL.String() || got.Host != want.Host ||
		got.ContentLength != want.ContentLength || got.Proto != want.Proto {
		t.Fatalf("request %s %s host %q length %d %s, want %s %s host %q length %d %s", got.Method, got.URL, got.Host,
			got.ContentLength, got.Proto, want.Method, want.URL, want.Host, want.ContentLength, want.Proto)
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Fatalf("headers\n%v\nwant\n%v", got.Header, want.Header)
	}
	// the header map is made for as many as are set: a plain
	// delivery's fits one group of 8 slots, not two
	if n := w.headerCount(context.Background(), sub, rec); sc == nil && n != len(got.Header) {
		t.Fatalf("room made for %d headers, %d set", n, len(got.Header))
	}
	if b := bodyOf(t, got.Body); !bytes.Equal(b, rec.Body) {
		t.Fatalf("body %q", b)
	}
	again, err := got.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	if b := bodyOf(t, again); !bytes.Equal(b, rec.Body) {
		t.Fatalf("body sent again %q", b)
	}
	return got
}

// A queue's target is reused while its callback stays, and a changed
// callback is checked again: one netguard refuses is a permanent failure.
func TestTargetOf_ChecksAChangedCallback(t *testing.T) {
	t.Parallel()
	a, err := targetOf(nil, "http://example.org/a")
	if err != nil {
		t.Fatal(err)
	}
	if same, _ := targetOf(a, "http://example.org/a"); same != a {
		t.Fatal("the same callback was parsed again")
	}
	b, err := targetOf(a, "http://example.org/b")
	if err != nil || b == a || b.url.Path != "/b" {
		t.Fatalf("changed callback: %+v, %v", b, err)
	}
	for _, bad := range []string{"ftp://example.org/", "http://user:pw@example.org/", "http:///nohost", "http://0x7f.1/"} {
		if _, err := targetOf(b, bad); err == nil {
			t.Errorf("%s passed the check", bad)
		}
	}
}

// netguard's client (no redirects, no cookies) sends straight to its
// transport, under its timeout; a client that follows redirects goes
// through http.Client, which follows them.
func TestSender_DirectOnlyForAClientThatFollowsNoRedirect(t *testing.T) {
	hang := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/cb", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/cb", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) }) // before srv.Close
	rec := wire.Record{Seq: 1, Body: []byte("<urlset/>")}

	guarded := NewWebhooks(nil, nil, Config{HubURL: testHubURL,
		Client: netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{Request: 200 * time.Millisecond})})
	if guarded.send.rt == nil || guarded.send.timeout != 200*time.Millisecond {
		t.Fatalf("netguard's client not sent to directly: %+v", guarded.send)
	}
	if a := guarded.post(context.Background(), nil, new(*target), hub.Subscription{Callback: srv.URL + "/moved"}, rec); a.status != http.StatusTemporaryRedirect {
		t.Fatalf("redirect followed or lost: %d %v", a.status, a.err)
	}
	start := time.Now()
	a := guarded.post(context.Background(), nil, new(*target), hub.Subscription{Callback: srv.URL + "/hang"}, rec)
	if a.err == nil || a.abandoned || signalOf(a) != signalPressure || time.Since(start) > 10*time.Second {
		t.Fatalf("a callback that hangs: %+v after %s, want a timeout", a, time.Since(start))
	}

	// the transport's wait for response headers, shorter than the
	// client's timeout, bounds the attempt through its context instead
	headers := NewWebhooks(nil, nil, Config{HubURL: testHubURL,
		Client: netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{ResponseHeader: 150 * time.Millisecond, Request: time.Minute})})
	if tr, ok := headers.send.rt.(*http.Transport); !ok || tr.ResponseHeaderTimeout != 0 || headers.send.timeout != 150*time.Millisecond {
		t.Fatalf("sender %+v: want a transport without a response header timeout, and that timeout on the request", headers.send)
	}
	start = time.Now()
	a = headers.post(context.Background(), nil, new(*target), hub.Subscription{Callback: srv.URL + "/hang"}, rec)
	if took := time.Since(start); a.err == nil || a.abandoned || signalOf(a) != signalPressure || took > 30*time.Second {
		t.Fatalf("a callback that sends no headers: %+v after %s, want a timeout long before the client's minute", a, took)
	}
	if a := headers.post(context.Background(), nil, new(*target), hub.Subscription{Callback: srv.URL + "/cb"}, rec); !a.ok() {
		t.Fatalf("a callback that answers: %d %v", a.status, a.err)
	}

	following := NewWebhooks(nil, nil, Config{HubURL: testHubURL, Client: &http.Client{}})
	if following.send.rt != nil {
		t.Fatal("a client that follows redirects is bypassed")
	}
	if a := following.post(context.Background(), nil, new(*target), hub.Subscription{Callback: srv.URL + "/moved"}, rec); !a.ok() {
		t.Fatalf("through http.Client: %d %v, want the redirect followed", a.status, a.err)
	}
}

// A reused header map holds what the last request set, whatever it set
// before: keys set again in the same place, keys in another place, keys
// no longer set, and more headers than its array had room for (the array
// moves, and the map follows it).
func TestHeaders_ReusedMapHoldsTheLastRequest(t *testing.T) {
	t.Parallel()
	b := reusableHeaders()
	build := func(kv ...string) {
		t.Helper()
		b.reset()
		want := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			b.set(kv[i], kv[i+1])
			want[kv[i]] = []string{kv[i+1]}
		}
		b.done()
		if !reflect.DeepEqual(b.h, want) {
			t.Fatalf("after setting %q the map holds %v, want %v", kv, b.h, want)
		}
	}
	build("A", "1", "B", "2", "C", "3")
	build("A", "4", "B", "5", "C", "6") // same places
	build("B", "7", "A", "8")           // other places, one gone
	many := []string{}
	for i := range maxHeaders + 3 {
		many = append(many, fmt.Sprintf("K%d", i), strconv.Itoa(i))
	}
	build(many...)                                                // the array moves
	build(append([]string{"K0", "x", "K1", "y"}, many[4:]...)...) // over the moved array
	build("K1", "z")
}
