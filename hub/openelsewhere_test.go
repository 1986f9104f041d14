package hub_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// An --open-topics hub whose store's channels are read only (an edge's)
// creates a new topic's channel through OpenElsewhere, never in its
// store: a topic it opens there is subscribed to, one it refuses
// (ErrNotFound) is denied as a topic the hub does not serve.
func TestOpenTopics_OpenElsewhereCreatesOrDenies(t *testing.T) {
	const opened, refused = "http://127.0.0.1:1/elsewhere/opened", "http://127.0.0.1:1/elsewhere/refused"
	var mu sync.Mutex
	calls := map[string]int{}
	f := newFixture(t, func(c *hub.Config) {
		store := c.Store
		c.OpenTopics = true
		c.OpenElsewhere = func(ctx context.Context, topic string) error {
			mu.Lock()
			calls[topic]++
			mu.Unlock()
			if topic != opened {
				return fmt.Errorf("the origin refuses %s: %w", topic, hub.ErrNotFound)
			}
			// the origin's channel, as it reaches the edge's mirror
			return store.PutChannel(ctx, hub.Channel{Topic: topic, Trust: hub.TrustOpen})
		}
	})
	cb := hubtest.NewCallback(t)
	if status, body := f.PostForm(hubtest.SubscribeForm(opened, cb.URL("/a"))); status != http.StatusAccepted {
		t.Fatalf("subscribe to a topic opened elsewhere: %d %q", status, body)
	}
	f.WaitActive(opened, cb.URL("/a"))

	if status, body := f.PostForm(hubtest.SubscribeForm(refused, cb.URL("/b"))); status != http.StatusAccepted {
		t.Fatalf("subscribe to a topic refused elsewhere: %d %q", status, body)
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		for _, q := range cb.Requests() {
			if q.Get("hub.mode") == "denied" && q.Get("hub.topic") == refused {
				return true
			}
		}
		return false
	}, "the subscription to a topic refused elsewhere denied")
	if _, err := f.Store.Channel(context.Background(), refused); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("a channel for the refused topic: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls[opened] != 1 || calls[refused] != 1 {
		t.Fatalf("OpenElsewhere calls %v, want one per topic", calls)
	}
}
