package hub_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// chanReadCounter counts the channel definitions and states read from its
// store, a store that cannot tell a channels version ("") and holds no
// listing.
type chanReadCounter struct {
	hub.Store
	channelReads, stateReads atomic.Int64
}

func (s *chanReadCounter) ChannelsVersion(context.Context) (string, error) { return "", nil }

func (s *chanReadCounter) ListedChannel(string, string) (hub.Channel, bool) {
	return hub.Channel{}, false
}

func (s *chanReadCounter) ChannelState(ctx context.Context, topic string) (hub.ChannelState, error) {
	s.stateReads.Add(1)
	return s.Store.ChannelState(ctx, topic)
}

func (s *chanReadCounter) Channel(ctx context.Context, topic string) (hub.Channel, error) {
	s.channelReads.Add(1)
	return s.Store.Channel(ctx, topic)
}

// versionedChanReadCounter is a chanReadCounter that passes its store's
// channels version on.
type versionedChanReadCounter struct{ *chanReadCounter }

func (s versionedChanReadCounter) ChannelsVersion(ctx context.Context) (string, error) {
	return s.Store.ChannelsVersion(ctx)
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
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	publish := func(from, until string) int {
		t.Helper()
		status, _ := f.PostXML(hubtest.Notif("change-notification", from, until), hubtest.Links(ch.Topic, f.URL))
		return status
	}
	if s := publish(t0, t1); s != http.StatusOK {
		t.Fatalf("first publish: %d", s)
	}
	reads := cs.channelReads.Load()
	if reads == 0 {
		t.Fatal("the definition was never read from the store")
	}
	f.Clock.Advance(time.Minute)
	if s := publish(t1, t2); s != http.StatusOK {
		t.Fatalf("second publish: %d", s)
	}
	if n := cs.channelReads.Load() - reads; n != 0 {
		t.Fatalf("%d reads of an unchanged definition a minute later; want 0", n)
	}
	// another hub (the store itself here) requires a token from now on
	changed := ch
	changed.Trust, changed.Token = hub.TrustToken, "a-token-of-16-chars-or-more"
	if err := f.Store.PutChannel(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(3 * time.Second)
	if s := publish(t2, t3); s == http.StatusOK {
		t.Fatal("a publish without the token was accepted after the channel changed through the store")
	}
	if cs.channelReads.Load() == reads {
		t.Fatal("the changed definition was not read again")
	}
}

// listedChanReadCounter is a versionedChanReadCounter that passes its
// store's ListedChannel on.
type listedChanReadCounter struct{ versionedChanReadCounter }

func (s listedChanReadCounter) ListedChannel(ver, topic string) (hub.Channel, bool) {
	return s.Store.ListedChannel(ver, topic)
}

// A channel the hub has not read yet is answered from the store's listing
// of the channels version, without a read of its own; a channel changed
// through this hub, or put since the listing, is read as before.
func TestLookupChannel_AnsweredFromTheStoresListingOfTheVersion(t *testing.T) {
	var cs *chanReadCounter
	f := newFixture(t, func(c *hub.Config) {
		cs = &chanReadCounter{Store: c.Store}
		c.Store = listedChanReadCounter{versionedChanReadCounter{cs}}
	})
	ctx := context.Background()
	var chs []hub.Channel
	for _, name := range []string{"a", "b", "c"} {
		chs = append(chs, f.Channel(hub.Channel{Topic: "https://example.org/" + name, Trust: hub.TrustOpen}))
	}
	if _, err := f.Store.Channels(ctx); err != nil { // as the follower engine does every few seconds
		t.Fatal(err)
	}
	publish := func(ch hub.Channel, from, until string) int {
		t.Helper()
		status, _ := f.PostXML(hubtest.Notif("change-notification", from, until), hubtest.Links(ch.Topic, f.URL))
		return status
	}
	reads := cs.channelReads.Load() // the puts read too
	for _, ch := range chs {
		if s := publish(ch, t0, t1); s != http.StatusOK {
			t.Fatalf("publish to %s: %d", ch.Topic, s)
		}
	}
	if n := cs.channelReads.Load() - reads; n != 0 {
		t.Fatalf("%d reads of channels the store's listing holds; want 0", n)
	}
	// changed through this hub: the listing of the version it held is stale
	changed := chs[0]
	changed.Trust, changed.Token = hub.TrustToken, "a-token-of-16-chars-or-more"
	if _, err := f.Hub.PutChannel(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if s := publish(changed, t1, t2); s == http.StatusOK {
		t.Fatal("a publish without the token was accepted after the channel changed through this hub")
	}
	// put since the listing, by another hub (the store itself here)
	late := hub.Channel{Topic: "https://example.org/late", Name: "late", Trust: hub.TrustOpen, Created: time.Unix(1, 0)}
	if err := f.Store.PutChannel(ctx, late); err != nil {
		t.Fatal(err)
	}
	reads = cs.channelReads.Load()
	if s := publish(late, t0, t1); s != http.StatusOK {
		t.Fatalf("publish to a channel put since the listing: %d", s)
	}
	if cs.channelReads.Load() == reads {
		t.Fatal("a channel missing from the listing was not read from the store")
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
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	if s, _ := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); s != http.StatusOK {
		t.Fatalf("first publish: %d", s)
	}
	reads := cs.channelReads.Load()
	f.Clock.Advance(3 * time.Second)
	if s, _ := f.PostXML(hubtest.Notif("change-notification", t1, t2), hubtest.Links(ch.Topic, f.URL)); s != http.StatusOK {
		t.Fatalf("second publish: %d", s)
	}
	if cs.channelReads.Load() == reads {
		t.Fatal("a definition older than the TTL was used without a channels version")
	}
}

// A hub does not read a channel's state before each publish to see
// whether a continuity reset was made through another hub while the
// store's channels version stays; a reset moves the version, and the
// other hub applies it before its next publish once it reads the version
// again.
func TestFreshState_ResetThroughAnotherHubSeenByTheVersion(t *testing.T) {
	a := newFixture(t)
	ch := a.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cs := &chanReadCounter{Store: a.Store}
	clockB := &testenv.Clock{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(hubtest.LoadContract(t).Validating(t, mux))
	t.Cleanup(srv.Close)
	b, err := hub.New(hub.Config{HubURL: a.URL, Store: versionedChanReadCounter{cs}, Log: a.Log, Client: http.DefaultClient,
		Logger: slog.New(slog.DiscardHandler), Now: clockB.Now})
	if err != nil {
		t.Fatal(err)
	}
	b.Register(mux)
	postB := func(from, until string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(hubtest.Notif("change-notification", from, until)))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", wire.NotificationLinks(ch.Topic, a.URL, ""))
		return hubtest.Do(t, req)
	}
	if s, r := a.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, a.URL)); s != http.StatusOK {
		t.Fatalf("A: %d %q", s, r)
	}
	if s, r := postB(t1, t2); s != http.StatusOK {
		t.Fatalf("B: %d %q", s, r)
	}
	reads := cs.stateReads.Load()
	clockB.Advance(time.Minute)
	if s, r := postB(t2, "2013-01-03T00:25:00Z"); s != http.StatusOK {
		t.Fatalf("B a minute later: %d %q", s, r)
	}
	if n := cs.stateReads.Load() - reads; n != 0 {
		t.Fatalf("B read the channel state %d times with the channels version unchanged; want 0", n)
	}
	// through A: the anchor jumps to t3+10min, past what B would accept next
	later := hubtest.MustTime(t3).Add(10 * time.Minute)
	if _, err := a.Hub.ResetContinuity(context.Background(), ch, later, "test"); err != nil {
		t.Fatal(err)
	}
	clockB.Advance(3 * time.Second)
	// under B's old anchor this would follow on; under the reset it overlaps
	if s, r := postB("2013-01-03T00:25:00Z", t3); s == http.StatusOK {
		t.Fatalf("B accepted a notification before the reset made through A: %d %q", s, r)
	}
	got, err := b.Continuity(context.Background(), ch)
	if err != nil || !got.LastUntil.Equal(later) {
		t.Fatalf("B's anchor %s, %v; want %s", got.LastUntil, err, later)
	}
}
