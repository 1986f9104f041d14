package admin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// WS-21: the hub may deny a subscription at any time: an operator removing
// it through the admin API sends hub.mode=denied with a reason.
func TestAdmin_DeleteSubscriptionDeniesIt(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	req, _ := http.NewRequest(http.MethodDelete, f.Server.URL+"/admin/subscriptions/"+sub.ID, nil)
	if status, body := hubtest.Do(t, req); status != http.StatusUnauthorized {
		t.Fatalf("without the admin token: %d %q, want 401", status, body)
	}
	req.Header.Set("Authorization", "Bearer admin-secret-token")
	if status, body := hubtest.Do(t, req); status != http.StatusNoContent {
		t.Fatalf("delete: %d %q", status, body)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		reqs := cb.Requests()
		last := reqs[len(reqs)-1]
		return last.Get("hub.mode") == "denied" && last.Get("hub.topic") == ch.Topic && last.Get("hub.reason") != ""
	}, "no denial sent")
	if _, err := f.Store.Subscription(context.Background(), sub.ID); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("subscription still stored: %v", err)
	}
}
