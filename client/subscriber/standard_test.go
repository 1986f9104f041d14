package subscriber

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// stdEnv is a Handler behind a loopback server with one restored
// subscription, a clock the test sets, and what it took and discarded.
type stdEnv struct {
	h         *Handler
	srv       *httptest.Server
	sub       Subscription
	now       time.Time
	got       chan *Notification
	discarded chan error
	refuse    error // OnNotification's answer
}

func newStdEnv(t *testing.T, policy SignaturePolicy, secret string) *stdEnv {
	t.Helper()
	e := &stdEnv{now: time.Unix(1_800_000_000, 0), got: make(chan *Notification, 8), discarded: make(chan error, 8)}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.h.ServeHTTP(w, r) }))
	t.Cleanup(e.srv.Close)
	h, err := New(Config{
		Callback:   e.srv.URL + "/cb",
		Signatures: policy,
		Now:        func() time.Time { return e.now },
		OnNotification: func(_ context.Context, n *Notification) error {
			if e.refuse != nil {
				return e.refuse
			}
			e.got <- n
			return nil
		},
		OnDiscard: func(_ Subscription, err error) { e.discarded <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	e.sub = Subscription{ID: "s1", Hub: "http://hub/", Topic: "http://s/topic", Secret: secret}
	h.Restore(e.sub)
	return e
}

// standardHeader signs body as message id at ts the way a hub does.
func standardHeader(t *testing.T, secret, id string, ts time.Time, body string) http.Header {
	t.Helper()
	sig, err := wire.SignStandard(secret, id, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", sig)
	return h
}

// deliver POSTs body with hdr to the subscription's callback and returns
// the status.
func (e *stdEnv) deliver(t *testing.T, hdr http.Header, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.h.CallbackFor(e.sub.ID), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// taken returns the notification handed over, or fails on a discard.
func (e *stdEnv) taken(t *testing.T) *Notification {
	t.Helper()
	select {
	case n := <-e.got:
		return n
	case err := <-e.discarded:
		t.Fatalf("discarded: %v", err)
	}
	return nil
}

// refused returns the reason of a discard, or fails on a notification.
func (e *stdEnv) refused(t *testing.T) error {
	t.Helper()
	select {
	case n := <-e.got:
		t.Fatalf("taken: %+v", n)
	case err := <-e.discarded:
		return err
	}
	return nil
}

const stdSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestDelivery_StandardSignatureTakenWithItsMessageID(t *testing.T) {
	e := newStdEnv(t, AcceptEither, stdSecret)
	if s := e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body); s != http.StatusAccepted {
		t.Fatalf("status %d", s)
	}
	n := e.taken(t)
	if !n.Signed || n.Scheme != wire.SchemeStandard || n.MessageID != "msg_1" {
		t.Fatalf("notification %+v", n)
	}
}

func TestDelivery_ReplayedWebhookIDRefused(t *testing.T) {
	e := newStdEnv(t, AcceptEither, stdSecret)
	capture := standardHeader(t, stdSecret, "msg_1", e.now, body)
	e.deliver(t, capture, body)
	e.taken(t)
	e.now = e.now.Add(time.Minute)
	if s := e.deliver(t, capture, body); s != http.StatusAccepted {
		t.Fatalf("status %d, want 2xx (the hub stops retrying)", s)
	}
	if err := e.refused(t); !errors.Is(err, ErrReplayed) || !strings.Contains(err.Error(), "msg_1") {
		t.Fatalf("replay: %v", err)
	}
	// the same id re-signed at a later time (a hub retry whose answer was
	// lost) is a repeat too
	e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body)
	if err := e.refused(t); !errors.Is(err, ErrReplayed) {
		t.Fatalf("retry of a taken id: %v", err)
	}
}

func TestDelivery_StaleTimestampRefusedBothWays(t *testing.T) {
	e := newStdEnv(t, AcceptEither, stdSecret)
	for i, skew := range []time.Duration{-5*time.Minute - time.Second, 5*time.Minute + time.Second} {
		e.deliver(t, standardHeader(t, stdSecret, "msg_"+strconv.Itoa(i), e.now.Add(skew), body), body)
		if err := e.refused(t); !errors.Is(err, wire.ErrStaleTimestamp) {
			t.Fatalf("skew %v: %v", skew, err)
		}
	}
	e.deliver(t, standardHeader(t, stdSecret, "msg_ok", e.now.Add(-5*time.Minute), body), body)
	e.taken(t)
}

func TestDelivery_ToleranceConfigurable(t *testing.T) {
	e := newStdEnv(t, AcceptEither, stdSecret)
	e.h.cfg.Tolerance = 30 * time.Second
	e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now.Add(-time.Minute), body), body)
	if err := e.refused(t); !errors.Is(err, wire.ErrStaleTimestamp) {
		t.Fatal(err)
	}
}

func TestDelivery_ForgedStandardSignatureRefused(t *testing.T) {
	e := newStdEnv(t, AcceptEither, stdSecret)
	hdr := standardHeader(t, "whsec_b3RoZXIga2V5", "msg_1", e.now, body)
	e.deliver(t, hdr, body)
	if err := e.refused(t); !errors.Is(err, wire.ErrSignatureMismatch) {
		t.Fatal(err)
	}
	// a forged delivery does not burn the id of the genuine one
	e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body)
	e.taken(t)
}

func TestDelivery_RequireStandardRefusesXHubSignatureAlone(t *testing.T) {
	e := newStdEnv(t, RequireStandard, "s3cret")
	sig, _ := wire.Sign("sha256", "s3cret", []byte(body))
	e.deliver(t, http.Header{"X-Hub-Signature": {sig}}, body)
	if err := e.refused(t); !errors.Is(err, wire.ErrNotSigned) || !strings.Contains(err.Error(), "Standard Webhooks signature is required") {
		t.Fatalf("X-Hub-Signature alone: %v", err)
	}
	// a raw (non-whsec_) secret is the Standard key as it is
	hdr := standardHeader(t, "s3cret", "msg_1", e.now, body)
	hdr.Set("X-Hub-Signature", sig)
	e.deliver(t, hdr, body)
	if n := e.taken(t); n.Scheme != wire.SchemeStandard {
		t.Fatalf("scheme %q", n.Scheme)
	}
}

func TestDelivery_AcceptEitherTakesXHubSignatureWithoutStandardHeaders(t *testing.T) {
	e := newStdEnv(t, AcceptEither, "s3cret")
	sig, _ := wire.Sign("sha256", "s3cret", []byte(body))
	e.deliver(t, http.Header{"X-Hub-Signature": {sig}}, body)
	if n := e.taken(t); n.Scheme != wire.SchemeWebSub || n.MessageID != "" {
		t.Fatalf("notification %+v", n)
	}
	// Standard headers present: they are what is checked, even beside a
	// valid X-Hub-Signature
	hdr := standardHeader(t, "s3cret", "msg_1", e.now.Add(time.Hour), body)
	hdr.Set("X-Hub-Signature", sig)
	e.deliver(t, hdr, body)
	if err := e.refused(t); !errors.Is(err, wire.ErrStaleTimestamp) {
		t.Fatal(err)
	}
}

func TestDelivery_AcceptWebSubIgnoresStandardHeaders(t *testing.T) {
	e := newStdEnv(t, AcceptWebSub, "s3cret")
	hdr := standardHeader(t, "s3cret", "msg_1", e.now, body)
	e.deliver(t, hdr, body)
	if err := e.refused(t); !errors.Is(err, wire.ErrNotSigned) {
		t.Fatalf("no X-Hub-Signature: %v", err)
	}
}

func TestDelivery_NotTakenIsNotRememberedSoTheRetryIsTaken(t *testing.T) {
	e := newStdEnv(t, RequireStandard, stdSecret)
	e.refuse = errors.New("disk full")
	if s := e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body); s != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", s)
	}
	e.refuse = nil
	e.now = e.now.Add(time.Minute)
	if s := e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body); s != http.StatusAccepted {
		t.Fatalf("retry: status %d", s)
	}
	e.taken(t)
}

func TestDelivery_FullReplayCachePostponesWith503(t *testing.T) {
	e := newStdEnv(t, RequireStandard, stdSecret)
	e.h.replay = newReplayCache(1)
	e.deliver(t, standardHeader(t, stdSecret, "msg_1", e.now, body), body)
	e.taken(t)
	if s := e.deliver(t, standardHeader(t, stdSecret, "msg_2", e.now, body), body); s != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", s)
	}
	e.now = e.now.Add(wire.DefaultTolerance + time.Second) // msg_1 expires
	if s := e.deliver(t, standardHeader(t, stdSecret, "msg_2", e.now, body), body); s != http.StatusAccepted {
		t.Fatalf("status %d", s)
	}
	e.taken(t)
}

func TestNew_RefusesUnknownSignaturePolicy(t *testing.T) {
	if _, err := New(Config{Callback: "http://x/", Signatures: SignaturePolicy(9)}); err == nil {
		t.Fatal("accepted")
	}
}

func TestSubscribe_SendsSchemeAndFilterAndRenewalKeepsThem(t *testing.T) {
	hub := &scriptedHub{}
	e := newEnv(t, hub)
	hub.verify = echoVerify(t, "3600")
	f, err := changefeed.ParseFilter([]string{"http://s/a/", "http://s/b/"}, []string{"created,deleted"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic", SubscribeOptions{Scheme: wire.SchemeStandard, Filter: f, VerifyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sub.Secret, "whsec_") || sub.Scheme != wire.SchemeStandard || sub.Filter == nil {
		t.Fatalf("subscription %+v", sub)
	}
	if _, err := wire.StandardKey(sub.Secret); err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		wire.ParamSignatureScheme: {"standard"},
		wire.ParamFilterPrefix:    {"http://s/a/", "http://s/b/"},
		wire.ParamFilterChange:    {"created,deleted"},
	}
	hub.mu.Lock()
	form := hub.forms[0]
	hub.mu.Unlock()
	for k, v := range want {
		if strings.Join(form[k], " ") != strings.Join(v, " ") {
			t.Errorf("%s = %q, want %q", k, form[k], v)
		}
	}
	opt := sub.RenewOptions(time.Hour)
	if opt.ID != sub.ID || opt.Secret != sub.Secret || opt.Scheme != sub.Scheme || len(opt.Filter.Prefixes) != 2 || opt.Lease != time.Hour {
		t.Fatalf("renewal options %+v", opt)
	}
	// nothing asked, nothing sent
	if _, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic2", SubscribeOptions{VerifyTimeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	hub.mu.Lock()
	form = hub.forms[1]
	hub.mu.Unlock()
	for k := range want {
		if _, ok := form[k]; ok {
			t.Errorf("%s sent unasked", k)
		}
	}
	if _, err := e.h.Subscribe(context.Background(), e.hub.URL, "http://s/topic", SubscribeOptions{Scheme: "svix"}); err == nil {
		t.Fatal("unknown scheme accepted")
	}
}
