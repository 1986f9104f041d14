package pull_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
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
