package subscriber_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

const interopSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

const interopBody = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="2026-01-02T10:00:00Z" until="2026-01-02T10:01:00Z"/>
<url><loc>http://s/a</loc><rs:md change="created" datetime="2026-01-02T10:00:00Z"/></url></urlset>`

// startHubWith runs a demo hub in-process with extra settings and returns
// its URL.
func startHubWith(t *testing.T, option func(*server.Config)) string {
	t.Helper()
	return servertest.Start(t, nil, func(c *server.Config) {
		c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost = 1, 3600, 86400, 4
		c.Retry = "50ms,x2,max=200ms,attempts=3"
		option(c)
	}).HubURL
}

// captured is one delivery as the callback received it.
type captured struct {
	header http.Header
	body   []byte
	libErr error // the Standard Webhooks library's verdict
}

// interopCallback is a callback server in front of a Handler: it
// verifies every POST with the Standard Webhooks library, records it, and
// hands it to the Handler. The Handler's clock is real time shifted by
// skew.
type interopCallback struct {
	h         *subscriber.Handler
	srv       *httptest.Server
	lib       *standardwebhooks.Webhook
	caps      chan captured
	got       chan *subscriber.Notification
	discarded chan error
	skew      atomic.Int64
}

func newInteropCallback(t *testing.T, policy subscriber.SignaturePolicy) *interopCallback {
	t.Helper()
	lib, err := standardwebhooks.NewWebhook(interopSecret)
	if err != nil {
		t.Fatal(err)
	}
	c := &interopCallback{lib: lib, caps: make(chan captured, 8), got: make(chan *subscriber.Notification, 8), discarded: make(chan error, 8)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			c.caps <- captured{r.Header.Clone(), b, c.lib.Verify(b, r.Header)}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		c.h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	c.h, err = subscriber.New(subscriber.Config{
		Callback:   c.srv.URL + "/",
		Signatures: policy,
		Now:        func() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) },
		OnNotification: func(_ context.Context, n *subscriber.Notification) error {
			c.got <- n
			return nil
		},
		OnDiscard: func(_ subscriber.Subscription, err error) { c.discarded <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// resend POSTs a captured delivery to the callback again, as an attacker
// who recorded it would.
func (c *interopCallback) resend(t *testing.T, url string, cp captured) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(cp.body))
	req.Header = cp.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-c.caps
}

func (c *interopCallback) next(t *testing.T) captured {
	t.Helper()
	select {
	case cp := <-c.caps:
		return cp
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery")
	}
	return captured{}
}

func (c *interopCallback) refused(t *testing.T) error {
	t.Helper()
	select {
	case n := <-c.got:
		t.Fatalf("replayed delivery taken: %+v", n)
	case err := <-c.discarded:
		return err
	}
	return nil
}

// TestStandardWebhooks_HubDeliveryVerifiedByLibraryAndSubscriber runs a
// real hub whose default scheme is standard, subscribes twice over
// loopback (asking nothing, and asking for both schemes), publishes, and
// checks each delivery with the Standard Webhooks library and with
// client/subscriber; then replays the captured delivery, at once and
// six minutes later, and checks both are refused.
func TestStandardWebhooks_HubDeliveryVerifiedByLibraryAndSubscriber(t *testing.T) {
	hubURL := startHubWith(t, func(c *server.Config) { c.SignatureScheme = wire.SchemeStandard })
	topic := hubURL + "topics/demo"
	ctx := context.Background()
	cb := newInteropCallback(t, subscriber.RequireStandard)
	plain, err := cb.h.Subscribe(ctx, hubURL, topic, subscriber.SubscribeOptions{Secret: interopSecret, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	both, err := cb.h.Subscribe(ctx, hubURL, topic, subscriber.SubscribeOptions{Secret: interopSecret, Scheme: wire.SchemeBoth, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p, err := publisher.New(ctx, publisher.Config{Hub: hubURL, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Publish(ctx, []publisher.Change{{Loc: "http://example.com/a", Change: changefeed.Created, Length: -1}}); err != nil {
		t.Fatal(err)
	}
	// the two deliveries run at once: each notification is paired with
	// its capture by its webhook-id, not by the order they came in
	byID := map[string]captured{}
	for range 2 {
		cp := cb.next(t)
		if cp.libErr != nil {
			t.Fatalf("the Standard Webhooks library refuses the hub's delivery: %v (headers %v)", cp.libErr, cp.header)
		}
		id := cp.header.Get("webhook-id")
		if id == "" {
			t.Fatal("no webhook-id")
		}
		byID[id] = cp
	}
	byURL := map[string]captured{}
	for range 2 {
		select {
		case n := <-cb.got:
			cp, ok := byID[n.MessageID]
			if n.Scheme != wire.SchemeStandard || !ok {
				t.Fatalf("notification %+v, not one of the deliveries captured", n)
			}
			byURL[n.Subscription.Callback] = cp
		case err := <-cb.discarded:
			t.Fatalf("client/subscriber refuses the hub's delivery: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no notification")
		}
	}
	first, ok := byURL[plain.Callback]
	if !ok || first.header.Get(wire.HeaderSignature) != "" {
		t.Fatalf("subscription without a scheme: X-Hub-Signature %q, want Standard only", first.header.Get(wire.HeaderSignature))
	}
	second, ok := byURL[both.Callback]
	if !ok || wire.Verify(second.header.Get(wire.HeaderSignature), interopSecret, second.body) != nil {
		t.Fatal("subscription asking both: no valid X-Hub-Signature")
	}

	cb.resend(t, plain.Callback, first)
	if err := cb.refused(t); !errors.Is(err, subscriber.ErrReplayed) {
		t.Fatalf("replayed at once: %v", err)
	}
	cb.skew.Store(int64(6 * time.Minute))
	cb.resend(t, both.Callback, second)
	if err := cb.refused(t); !errors.Is(err, wire.ErrStaleTimestamp) {
		t.Fatalf("replayed six minutes later: %v", err)
	}
	// the capture stripped of its Standard headers carries only
	// X-Hub-Signature, which RequireStandard refuses
	stripped := captured{header: second.header.Clone(), body: second.body}
	for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		stripped.header.Del(k)
	}
	cb.resend(t, both.Callback, stripped)
	if err := cb.refused(t); !errors.Is(err, wire.ErrNotSigned) {
		t.Fatalf("replayed without Standard headers: %v", err)
	}
}

// TestStandardWebhooks_LibrarySignatureVerifiedBySubscriber: a delivery
// signed by the Standard Webhooks library is taken by client/subscriber.
func TestStandardWebhooks_LibrarySignatureVerifiedBySubscriber(t *testing.T) {
	cb := newInteropCallback(t, subscriber.RequireStandard)
	sub := subscriber.Subscription{ID: "lib", Hub: "http://hub.example/", Topic: "http://s.example/topic", Secret: interopSecret}
	cb.h.Restore(sub)
	now := time.Now()
	sig, err := cb.lib.Sign("msg_library_1", now, []byte(interopBody))
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{}
	hdr.Set(standardwebhooks.HeaderWebhookID, "msg_library_1")
	hdr.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	hdr.Set(standardwebhooks.HeaderWebhookSignature, sig)
	hdr.Set("Content-Type", "application/xml")
	cb.resend(t, cb.h.CallbackFor(sub.ID), captured{header: hdr, body: []byte(interopBody)})
	select {
	case n := <-cb.got:
		if n.Scheme != wire.SchemeStandard || n.MessageID != "msg_library_1" || n.Document == nil {
			t.Fatalf("notification %+v", n)
		}
	case err := <-cb.discarded:
		t.Fatalf("refused: %v", err)
	}
}
