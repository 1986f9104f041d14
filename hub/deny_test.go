package hub_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// A denial DenySubscription sends in the background is joined by Run:
// Run returns only once the subscriber has been told, however long its
// callback takes to answer.
func TestDenySubscription_RunWaitsForTheDenial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lg, st := hubtest.Backing(t)
	entered, release, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hub.mode") != "denied" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		once.Do(func() { close(entered) })
		<-release
		w.WriteHeader(http.StatusOK)
		close(answered)
	}))
	t.Cleanup(cb.Close)
	var released sync.Once
	unblock := func() { released.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before cb.Close, which waits for the handler
	h, err := hub.New(hub.Config{HubURL: "http://127.0.0.1:1/", Store: st, Log: lg,
		Client: hubtest.Client(t, "127.0.0.0/8"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { _ = h.Run(runCtx); close(ran) }()

	topic, callback := "http://example.com/a/changelist.xml", cb.URL+"/cb"
	sub := hub.Subscription{ID: hub.SubscriptionID(topic, callback), Topic: topic, Callback: callback}
	if err := h.DenySubscription(ctx, sub, "removed by the operator"); err != nil {
		t.Fatal(err)
	}
	select { // the denial is in flight
	case <-entered:
	case <-ctx.Done():
		t.Fatal("no denial sent")
	}
	stopRun()
	select {
	case <-ran:
		t.Fatal("Run returned while a denial was in flight")
	case <-time.After(200 * time.Millisecond): // a negative check: Run stays for the denial
	}
	unblock()
	select {
	case <-ran:
	case <-ctx.Done():
		t.Fatal("Run did not return once the denial was answered")
	}
	select {
	case <-answered:
	default:
		t.Fatal("Run returned before the callback answered")
	}
}
