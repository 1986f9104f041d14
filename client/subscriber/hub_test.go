package subscriber_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// startHub runs a demo hub in-process and returns its URL.
func startHub(t *testing.T) string {
	t.Helper()
	return servertest.Start(t, nil, func(c *server.Config) {
		c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost = 1, 3600, 86400, 4
		c.Retry = "50ms,x2,max=200ms,attempts=3"
	}).HubURL
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
