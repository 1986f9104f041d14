package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// A subscription to a channel's feed URL (the subscription document's
// rel="self") reads that channel and is stored with FormatAtom; the
// verification of intent names the feed URL.
func TestSubscribe_FeedURLResolvesToItsChannel(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	feed := strings.TrimSuffix(f.URL, "/") + wire.FeedPath(ch.Name)
	if got := f.Hub.FeedChannel(feed); got != ch.Name {
		t.Fatalf("FeedChannel(%s) = %q, want %q", feed, got, ch.Name)
	}
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(feed, cb.URL("/cb")))
	sub := f.WaitActive(feed, cb.URL("/cb"))
	if sub.Channel != ch.Name || sub.Format != hub.FormatAtom || sub.Topic != feed {
		t.Fatalf("subscription %+v", sub)
	}
	if q := cb.Requests()[0]; q.Get("hub.mode") != "subscribe" || q.Get("hub.topic") != feed {
		t.Fatalf("verification %v", q)
	}
	// the channel's own topic stays an ordinary subscription
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb2")))
	if s := f.WaitActive(ch.Topic, cb.URL("/cb2")); s.Format != "" || s.Channel != ch.Name {
		t.Fatalf("subscription %+v", s)
	}
}

// The feed URL of a channel the hub does not have is denied, even with
// OpenTopics (no channel is made for it), and so are near misses.
func TestSubscribe_UnknownFeedURLDenied(t *testing.T) {
	f := newFixture(t, func(c *hub.Config) { c.OpenTopics = true })
	base := strings.TrimSuffix(f.URL, "/")
	for _, u := range []string{base + "/channels/x/feed.atom?y", base + "/channels//feed.atom", base + "/channels/a/b/feed.atom"} {
		if got := f.Hub.FeedChannel(u); got != "" {
			t.Errorf("FeedChannel(%s) = %q", u, got)
		}
	}
	cb := hubtest.NewCallback(t)
	feed := base + wire.FeedPath("nosuch")
	f.PostForm(hubtest.SubscribeForm(feed, cb.URL("/cb")))
	testenv.Eventually(t, 10*time.Second, func() bool { return cb.Count.Load() == 1 })
	if q := cb.Requests()[0]; q.Get("hub.mode") != "denied" || q.Get("hub.topic") != feed {
		t.Fatalf("denial query %v", q)
	}
	if _, err := f.Store.Channel(context.Background(), feed); err == nil {
		t.Fatal("a channel was made for the feed URL")
	}
}
