package subscriber_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/internal/app"
)

// startHub runs a demo hub in-process and returns its URL.
func startHub(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan app.Started, 1)
	done := make(chan error, 1)
	cfg := app.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), NATSListen: "off", NATSReplicas: 1, Sync: "default",
		MaxBody: 10 << 20, LeaseMin: 1, LeaseDefault: 3600, LeaseMax: 86400, PerHost: 4,
		LogFormat: "text", LogLevel: "warn", Demo: true, ShutdownTimeout: 5 * time.Second,
		RotateEntries: 50000, Retry: "50ms,x2,max=200ms,attempts=3", SigMethod: "sha256", StartupTimeout: 30 * time.Second,
	}
	go func() {
		err := app.Run(ctx, cfg, slog.New(slog.DiscardHandler), func(s app.Started) { started <- s })
		done <- err
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case s := <-started:
		return s.HubURL
	case err := <-done:
		t.Fatalf("hub: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("hub did not start")
	}
	return ""
}

// TestAgainstHub_DiscoverSubscribePublishDeliver runs the whole WebSub
// round trip against a real hub: discovery from the hub's Source
// Description, subscription with a secret, a fat ping by client/publisher,
// a signed delivery and an unsubscription.
func TestAgainstHub_DiscoverSubscribePublishDeliver(t *testing.T) {
	hubURL := startHub(t)
	ctx := context.Background()
	ch, err := subscriber.Discover(ctx, http.DefaultClient, hubURL)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Hub != hubURL || ch.Topic != hubURL+"topics/demo" {
		t.Fatalf("discovered %+v", ch)
	}
	got := make(chan *subscriber.Notification, 4)
	var h *subscriber.Handler
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer cb.Close()
	h, err = subscriber.New(subscriber.Config{Callback: cb.URL + "/", OnNotification: func(_ context.Context, n *subscriber.Notification) error {
		got <- n
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := h.Subscribe(ctx, ch.Hub, ch.Topic, subscriber.SubscribeOptions{Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Lease != time.Hour {
		t.Fatalf("lease %v", sub.Lease)
	}
	p, err := publisher.New(ctx, publisher.Config{Hub: ch.Hub, Topic: ch.Topic})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Publish(ctx, []publisher.Change{{Loc: "http://example.com/a", Change: changefeed.Created, Length: -1}})
	if err != nil || res.Seq == 0 {
		t.Fatalf("publish: %+v %v", res, err)
	}
	select {
	case n := <-got:
		if !n.Signed || n.Topic != ch.Topic || n.Hub != ch.Hub || !n.Document.MD.Until.Time.Equal(res.Window.Until) {
			t.Fatalf("delivery %+v", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery")
	}
	if err := h.Unsubscribe(ctx, sub.ID, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// the hub refuses a bad publish with its reason
	bad, _ := publisher.New(ctx, publisher.Config{Hub: ch.Hub, Topic: ch.Hub + "topics/nope"})
	_, err = bad.Publish(ctx, nil)
	var he *publisher.HubError
	if !errors.As(err, &he) || he.Status != 404 || he.Reason == "" {
		t.Fatalf("publish to an unknown topic: %v", err)
	}
}
