package delivery

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

// gatedStore holds every Cursor read until its gate opens, counting the
// reads in flight.
type gatedStore struct {
	Store
	gate chan struct{}

	mu              sync.Mutex
	inFlight, maxIn int
}

func (s *gatedStore) Cursor(ctx context.Context, id string) (hub.Cursor, error) {
	s.mu.Lock()
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	select {
	case <-s.gate:
	case <-ctx.Done():
		return hub.Cursor{}, ctx.Err()
	}
	return s.Store.Cursor(ctx, id)
}

func (s *gatedStore) counts() (inFlight, maxIn int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight, s.maxIn
}

// A hub starting many queues at once reads their state from the store at
// most startParallel at a time; the others wait for a starter, hold no
// goroutine, and all start once the store answers. A queue stopped while
// it waits finishes without reading anything.
func TestWebhooks_StartingQueuesReadTheStoreBoundedly(t *testing.T) {
	t.Parallel()
	const n = startParallel + startParallel/2 // each starter reads a second queue's state for half of them
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	var ids []string
	for i := range n {
		ids = append(ids, e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	st := &gatedStore{Store: e.store, gate: make(chan struct{})}
	w := NewWebhooks(e.log, st, e.fastConfig())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waiting := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.toStart)
	}
	testenv.Eventually(t, wait, func() bool {
		in, _ := st.counts()
		return in == startParallel && waiting() == n-startParallel
	}, "startParallel queues reading their cursor, the others waiting")

	stopped := ids[n-1] // last in line
	w.Deactivate(stopped)
	close(st.gate)
	testenv.Eventually(t, wait, func() bool { p, all := parkedCount(w); return all == n-1 && p == n-1 }, "every other queue started and parked")
	if _, maxIn := st.counts(); maxIn > startParallel {
		t.Errorf("%d cursor reads in flight at once, want at most %d", maxIn, startParallel)
	}
	testenv.Eventually(t, wait, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.queues[stopped] == nil && w.retired[stopped] == nil
	}, "the queue stopped while waiting finished")

	// They deliver, in order, once woken.
	seqs := e.publish(topic, "feed", 0, 2)
	testenv.Eventually(t, wait, func() bool {
		for _, id := range ids[:n-1] {
			if e.cursor(id).Seq != seqs[1] {
				return false
			}
		}
		return true
	}, "every started queue delivered both")
	byPath := map[string][]string{}
	for _, d := range r.all() {
		byPath[d.Path] = append(byPath[d.Path], d.Body)
	}
	for i := range n - 1 {
		if got := byPath["/cb/"+strconv.Itoa(i)]; len(got) != 2 || got[0] != "feed-0" || got[1] != "feed-1" {
			t.Fatalf("callback %d got %q, want [feed-0 feed-1]", i, got)
		}
	}
	if got := byPath["/cb/"+strconv.Itoa(n-1)]; len(got) != 0 {
		t.Errorf("stopped queue's callback got %q, want nothing", got)
	}
}
