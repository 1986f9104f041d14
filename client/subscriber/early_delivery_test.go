package subscriber_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/wire"
)

// A hub may deliver the moment it has the challenge back, even before its
// answer to the subscription request arrives: that delivery is accepted.
func TestDelivery_AcceptedRightAfterVerification(t *testing.T) {
	got := make(chan *subscriber.Notification, 1)
	var h *subscriber.Handler
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer callbacks.Close()
	deliveryStatus := make(chan int, 1)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		callback, topic, secret := r.PostForm.Get("hub.callback"), r.PostForm.Get("hub.topic"), r.PostForm.Get("hub.secret")
		q := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.challenge": {"c-1"}, "hub.lease_seconds": {"3600"}}
		resp, err := http.Get(callback + "&" + q.Encode())
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		req, _ := http.NewRequest(http.MethodPost, callback, strings.NewReader(notification))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", `<`+topic+`>; rel="self", <http://hub.example/>; rel="hub"`)
		sig, _ := wire.Sign("sha256", secret, []byte(notification))
		req.Header.Set(wire.HeaderSignature, sig)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			deliveryStatus <- resp.StatusCode
		}
		w.WriteHeader(http.StatusAccepted) // only now does Subscribe get its answer
	}))
	defer hub.Close()
	h, err := subscriber.New(subscriber.Config{
		Callback:       callbacks.URL + "/callback",
		OnNotification: func(_ context.Context, n *subscriber.Notification) error { got <- n; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe(context.Background(), hub.URL, "http://example.com/dataset1/change/", subscriber.SubscribeOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := <-deliveryStatus; st/100 != 2 {
		t.Fatalf("delivery right after verification answered %d", st)
	}
	select {
	case n := <-got:
		if !n.Signed {
			t.Fatal("delivery not signed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("notification not handed over")
	}
}
