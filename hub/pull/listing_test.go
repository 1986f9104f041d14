package pull_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// versionedChannels is a channel lister with a channels version, counting
// its listings.
type versionedChannels struct {
	mutableChannels
	ver      atomic.Int64
	listings atomic.Int64
}

func (v *versionedChannels) Channels(ctx context.Context) ([]hub.Channel, error) {
	v.listings.Add(1)
	return v.mutableChannels.Channels(ctx)
}

func (v *versionedChannels) ChannelsVersion(context.Context) (string, error) {
	return string(rune('a' + v.ver.Load())), nil
}

func (v *versionedChannels) set(chs ...hub.Channel) {
	v.mutableChannels.set(chs...)
	v.ver.Add(1)
}

// With a lister that has a channels version, the channels are listed
// again only when the version moved, however much time passed.
func TestListing_AgainOnlyWhenTheVersionMoves(t *testing.T) {
	e := newEnv(t, pull.Config{})
	ctx := context.Background()
	a := hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: t0}
	b := hub.Channel{Name: "b", Topic: "http://example.com/b/change/", Created: t0}
	lister := &versionedChannels{}
	lister.set(a)
	p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: e.base})
	if err != nil {
		t.Fatal(err)
	}
	clock := &testenv.Clock{}
	pull.SetClock(p, clock.Now)
	names := func() []string {
		t.Helper()
		list, err := pull.Listing(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ch := range list {
			out = append(out, ch.Name)
		}
		return out
	}
	if got := names(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("first listing %q", got)
	}
	listed := lister.listings.Load()
	for range 3 {
		clock.Advance(pull.ChannelsTTL + time.Second)
		if got := names(); len(got) != 1 {
			t.Fatalf("listing %q", got)
		}
	}
	if n := lister.listings.Load() - listed; n != 0 {
		t.Fatalf("listed %d times more with the version unchanged; want 0", n)
	}
	lister.set(a, b)
	if got := names(); len(got) != 1 {
		t.Fatalf("a listing within the TTL changed: %q", got)
	}
	clock.Advance(pull.ChannelsTTL + time.Second)
	if got := names(); len(got) != 2 || got[1] != "b" {
		t.Fatalf("listing after the version moved: %q, want a and b", got)
	}
}

// A channel deleted through this process (Config.LocalChanges moved) is
// gone from every document of its own and from the Source Description at
// once; a process that shares the store but did not delete it (its count
// did not move) drops it within ChannelsTTL.
func TestListing_DeletedChannelGoneAtOnceHereWithinChannelsTTLElsewhere(t *testing.T) {
	e := newEnv(t, pull.Config{})
	a := hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: t0}
	b := hub.Channel{Name: "b", Topic: "http://example.com/b/change/", Created: t0}
	lister := &mutableChannels{}
	lister.set(a, b)
	clock := &testenv.Clock{}
	var changes atomic.Uint64
	start := func(local func() uint64) string {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: srv.URL, LocalChanges: local})
		if err != nil {
			t.Fatal(err)
		}
		pull.SetClock(p, clock.Now)
		p.Register(mux)
		return srv.URL
	}
	here, elsewhere := start(changes.Load), start(nil)
	docs := func(base string) []string {
		return []string{base + wire.CapabilityListPath("b"), base + wire.FeedPath("b")}
	}
	described := func(base string) bool {
		_, body := e.get(http.MethodGet, base+wire.PathWellKnown)
		return strings.Contains(string(body), wire.CapabilityListPath("b"))
	}
	for _, base := range []string{here, elsewhere} {
		for _, u := range docs(base) {
			if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusOK {
				t.Fatalf("GET %s before the deletion: %s", u, r.Status)
			}
		}
		if !described(base) {
			t.Fatalf("%s: the Source Description does not list b", base)
		}
	}

	lister.set(a)  // b deleted from the store …
	changes.Add(1) // … through the process serving here
	for _, u := range docs(here) {
		if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s right after the deletion here: %s, want 404", u, r.Status)
		}
	}
	if described(here) {
		t.Error("the Source Description still lists b right after its deletion here")
	}
	clock.Advance(pull.ChannelsTTL) // the documented bound for the other processes
	for _, u := range docs(elsewhere) {
		if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s ChannelsTTL after the deletion elsewhere: %s, want 404", u, r.Status)
		}
	}
	if described(elsewhere) {
		t.Error("the Source Description elsewhere still lists b ChannelsTTL after its deletion")
	}
}

// failingVersionedChannels is a versioned lister whose version and listing
// both fail while down is set, as a store does while it is unreachable.
type failingVersionedChannels struct {
	versionedChannels
	down  atomic.Bool
	reads atomic.Int64 // version reads
}

func (f *failingVersionedChannels) Channels(ctx context.Context) ([]hub.Channel, error) {
	if f.down.Load() {
		return nil, errOutage
	}
	return f.versionedChannels.Channels(ctx)
}

func (f *failingVersionedChannels) ChannelsVersion(ctx context.Context) (string, error) {
	f.reads.Add(1)
	if f.down.Load() {
		return "", errOutage
	}
	return f.versionedChannels.ChannelsVersion(ctx)
}

// A listing that failed is cleared by the next contact with the lister
// that works, even when that contact is only the version read telling
// that nothing changed (the list cached before the outage is still right):
// pull mode must not stay stalled until the channel list changes.
func TestListing_HealthyAgainWhenTheUnchangedVersionAnswers(t *testing.T) {
	e := newEnv(t, pull.Config{})
	ctx := context.Background()
	lister := &failingVersionedChannels{}
	lister.set(hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: t0})
	p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: e.base})
	if err != nil {
		t.Fatal(err)
	}
	clock := &testenv.Clock{}
	pull.SetClock(p, clock.Now)
	if _, err := pull.Listing(ctx, p); err != nil {
		t.Fatal(err)
	}
	lister.down.Store(true)
	clock.Advance(pull.ChannelsTTL + time.Second)
	if _, err := pull.Listing(ctx, p); !errors.Is(err, errOutage) {
		t.Fatalf("listing during the outage: %v, want the outage", err)
	}
	if ok, _, _ := p.Health(); ok {
		t.Fatal("pull mode healthy while the lister fails")
	}
	lister.down.Store(false)
	clock.Advance(pull.ChannelsTTL + time.Second)
	listed := lister.listings.Load()
	if _, err := pull.Listing(ctx, p); err != nil {
		t.Fatal(err)
	}
	if lister.listings.Load() != listed {
		t.Fatal("listed again with the version unchanged; the test no longer takes the version-only path")
	}
	if ok, since, err := p.Health(); !ok {
		t.Fatalf("pull mode stalled since %v after the lister answered again: %v", since, err)
	}
}

// Run clears a listing failure by itself: after a request saw the lister
// fail, pull mode is healthy again within a round of Run once the lister
// answers, with no request and no record to make it list again.
func TestRun_ClearsAListingFailureWithNoActivity(t *testing.T) {
	e := newEnv(t, pull.Config{})
	lister := &failingVersionedChannels{}
	lister.set(hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: t0})
	p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: e.base})
	if err != nil {
		t.Fatal(err)
	}
	clock := &testenv.Clock{}
	pull.SetClock(p, clock.Now)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	testenv.Eventually(t, 5*time.Second, func() bool { return lister.reads.Load() > 0 }, "Run's first round")

	lister.down.Store(true)
	clock.Advance(pull.ChannelsTTL + time.Second)
	if _, _, err := pull.Channel(ctx, p, "a"); err == nil {
		t.Fatal("a request listed the channels during the outage")
	}
	if ok, _, _ := p.Health(); ok {
		t.Fatal("pull mode healthy after a listing failed")
	}
	lister.down.Store(false)
	clock.Advance(pull.ChannelsTTL + time.Second)
	testenv.Eventually(t, pull.Poll+2*time.Second, func() bool { ok, _, _ := p.Health(); return ok },
		"pull mode healthy again with no activity")
}
