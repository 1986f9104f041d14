package hub_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// gatedLister is a store whose Channels counts its calls and, once armed,
// waits for the gate to open.
type gatedLister struct {
	hub.Store
	calls atomic.Int64
	armed atomic.Bool
	gate  chan struct{}
}

func (s *gatedLister) Channels(ctx context.Context) ([]hub.Channel, error) {
	s.calls.Add(1)
	if s.armed.Load() {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Channels(ctx)
}

// Every live session checks each record's channel by name: when the name
// index has gone stale, the callers that find it so together wait for one
// listing of the store instead of each listing it.
func TestChannelByName_OneListingForConcurrentCallers(t *testing.T) {
	var st *gatedLister
	f := hubtest.Start(t, func(c *hub.Config) {
		st = &gatedLister{Store: c.Store, gate: make(chan struct{})}
		c.Store = st
	}, nil)
	f.Channel(hub.Channel{Name: "a", Topic: "http://example.com/a", Trust: hub.TrustOpen})
	ctx := context.Background()
	if _, err := f.Hub.ChannelByName(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(time.Minute) // the index is stale
	st.armed.Store(true)
	before := st.calls.Load()
	const callers = 50
	var started atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			started.Add(1)
			if ch, err := f.Hub.ChannelByName(ctx, "a"); err != nil || ch.Name != "a" {
				errs <- err
			}
		})
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return st.calls.Load() > before && started.Load() == callers },
		"one listing under way and every caller started")
	close(st.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("ChannelByName: %v", err)
	}
	if n := st.calls.Load() - before; n != 1 {
		t.Errorf("%d listings of the store for %d concurrent lookups, want 1", n, callers)
	}
}

// A store that does not answer costs the lookups one bounded listing: the
// callers that follow within a second get its failure at once, and the
// store is listed again after that.
func TestChannelByName_FailedListingAnsweredAgainForASecond(t *testing.T) {
	var st *gatedLister
	f := hubtest.Start(t, func(c *hub.Config) {
		st = &gatedLister{Store: c.Store, gate: make(chan struct{})}
		c.Store = st
	}, nil)
	f.Channel(hub.Channel{Name: "a", Topic: "http://example.com/a", Trust: hub.TrustOpen})
	f.Clock.Advance(time.Minute)
	st.armed.Store(true) // the listing hangs until its deadline
	before := st.calls.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := f.Hub.ChannelByName(ctx, "a")
	cancel()
	if err == nil {
		t.Fatal("lookup answered while the store hangs")
	}
	if n := st.calls.Load() - before; n != 1 {
		t.Fatalf("%d listings, want 1", n)
	}
	// the caller's own deadline ended it: not the store's failure
	if _, err := f.Hub.ChannelByName(context.Background(), "x"); err == nil {
		t.Fatal("want the hanging store's failure")
	}
	for range 20 {
		if _, err := f.Hub.ChannelByName(context.Background(), "a"); err == nil {
			t.Fatal("lookup answered while the store hangs")
		}
	}
	if n := st.calls.Load() - before; n != 2 {
		t.Errorf("%d listings for 22 lookups within a second of a failure, want 2", n)
	}
	st.armed.Store(false)
	f.Clock.Advance(2 * time.Second)
	if ch, err := f.Hub.ChannelByName(context.Background(), "a"); err != nil || ch.Name != "a" {
		t.Fatalf("after the retry pause: %+v, %v", ch, err)
	}
}
