package hub_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// chanReadCounter counts the channel definitions read from its store.
type chanReadCounter struct {
	hub.Store
	channelReads atomic.Int64
}

func (s *chanReadCounter) Channel(ctx context.Context, topic string) (hub.Channel, error) {
	s.channelReads.Add(1)
	return s.Store.Channel(ctx, topic)
}

// versionedChanReadCounter is a chanReadCounter that passes its store's
// channels version on.
type versionedChanReadCounter struct{ *chanReadCounter }

func (s versionedChanReadCounter) ChannelsVersion(ctx context.Context) (string, error) {
	return s.Store.(interface {
		ChannelsVersion(context.Context) (string, error)
	}).ChannelsVersion(ctx)
}

// A channel definition is read once while the store's channels version
// stays the same, however long; a change made through the store by
// another hub shows once the version is read again (channelCacheTTL).
func TestLookupChannel_KeptWhileTheChannelsVersionStays(t *testing.T) {
	var cs *chanReadCounter
	f := newFixture(t, func(c *hub.Config) {
		cs = &chanReadCounter{Store: c.Store}
		c.Store = versionedChanReadCounter{cs}
	})
	ch := f.channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	publish := func(from, until string) int {
		t.Helper()
		status, _ := f.postXML(notif("change-notification", from, until), links(ch.Topic, f.url))
		return status
	}
	if s := publish(t0, t1); s != http.StatusOK {
		t.Fatalf("first publish: %d", s)
	}
	reads := cs.channelReads.Load()
	if reads == 0 {
		t.Fatal("the definition was never read from the store")
	}
	f.clock.Advance(time.Minute)
	if s := publish(t1, t2); s != http.StatusOK {
		t.Fatalf("second publish: %d", s)
	}
	if n := cs.channelReads.Load() - reads; n != 0 {
		t.Fatalf("%d reads of an unchanged definition a minute later; want 0", n)
	}
	// another hub (the store itself here) requires a token from now on
	changed := ch
	changed.Trust, changed.Token = hub.TrustToken, "a-token-of-16-chars-or-more"
	if err := f.store.PutChannel(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(3 * time.Second)
	if s := publish(t2, t3); s == http.StatusOK {
		t.Fatal("a publish without the token was accepted after the channel changed through the store")
	}
	if cs.channelReads.Load() == reads {
		t.Fatal("the changed definition was not read again")
	}
}

// Without a channels version the definition is read again once it is
// channelCacheTTL old.
func TestLookupChannel_WithoutAVersionReadsAgainAfterTheTTL(t *testing.T) {
	var cs *chanReadCounter
	f := newFixture(t, func(c *hub.Config) {
		cs = &chanReadCounter{Store: c.Store}
		c.Store = cs
	})
	ch := f.channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	if s, _ := f.postXML(notif("change-notification", t0, t1), links(ch.Topic, f.url)); s != http.StatusOK {
		t.Fatalf("first publish: %d", s)
	}
	reads := cs.channelReads.Load()
	f.clock.Advance(3 * time.Second)
	if s, _ := f.postXML(notif("change-notification", t1, t2), links(ch.Topic, f.url)); s != http.StatusOK {
		t.Fatalf("second publish: %d", s)
	}
	if cs.channelReads.Load() == reads {
		t.Fatal("a definition older than the TTL was used without a channels version")
	}
}
