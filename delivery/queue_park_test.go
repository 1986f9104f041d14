package delivery

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// parkedCount returns how many of the engine's queues are parked.
func parkedCount(w *Webhooks) (parked, all int) {
	w.mu.Lock()
	qs := make([]*queue, 0, len(w.queues))
	for _, q := range w.queues {
		qs = append(qs, q)
	}
	w.mu.Unlock()
	for _, q := range qs {
		q.mu.Lock()
		if q.parked != nil {
			parked++
		}
		q.mu.Unlock()
	}
	return parked, len(qs)
}

// Caught-up queues hold no goroutine; an append to their channel resumes
// each, which delivers and parks again.
func TestWebhooks_IdleQueuesParkWithoutAGoroutine(t *testing.T) {
	const n = 300
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	var ids []string
	for i := range n {
		ids = append(ids, e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	first := e.publish(topic, "feed", 0, 1)
	before := runtime.NumGoroutine()
	cfg := e.fastConfig()
	// connections to the one callback host, and their goroutines, follow
	// its concurrency limit: fixed here, so that they count the same
	// however fast the queues start
	cfg.PerHostMin, cfg.PerHostMax = DefaultPerHost, DefaultPerHost
	w, _ := e.start(cfg)
	allParked := func() bool { p, all := parkedCount(w); return all == n && p == n }
	testenv.Eventually(t, wait, func() bool {
		for _, id := range ids {
			if e.cursor(id).Seq != first[0] {
				return false
			}
		}
		return allParked()
	}, "every queue delivered and parked")
	// The engine's own loops, idle HTTP connections and the receiver's
	// handlers remain; none per subscription.
	if grew := runtime.NumGoroutine() - before; grew >= n/3 {
		t.Errorf("goroutines grew by %d for %d parked queues", grew, n)
	}

	next := e.publish(topic, "feed", 1, 2)
	testenv.Eventually(t, wait, func() bool {
		for _, id := range ids {
			if e.cursor(id).Seq != next[1] {
				return false
			}
		}
		return allParked()
	}, "every queue resumed, delivered the appends and parked again")
	perPath := map[string][]string{}
	for _, d := range r.all() {
		perPath[d.Path] = append(perPath[d.Path], d.Header.Get(wire.HeaderSeq))
	}
	want := []string{strconv.FormatUint(first[0], 10), strconv.FormatUint(next[0], 10), strconv.FormatUint(next[1], 10)}
	for path, got := range perPath {
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("%s received %v, want %v", path, got, want)
		}
	}
	if len(perPath) != n {
		t.Fatalf("%d callbacks received, want %d", len(perPath), n)
	}
}

// A parked queue's lease end is set again at each park (leaseWakes):
// after several deliveries the end of the lease still stops the queue, and
// a wake-up before it does not.
func TestWebhooks_ParkedQueueStopsAtItsLeaseAfterManyParks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	sub.Expires = e.clock.Now().Add(3 * time.Second)
	if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
		t.Fatal(err)
	}
	w, _ := e.start(e.fastConfig())
	var q *queue
	testenv.Eventually(t, wait, func() bool { q = w.queueFor(sub.ID); return q != nil }, "the queue")
	for i := range 3 {
		waitDeliveredParked(t, q, e.publish(topic, "feed", i, 1)[0])
	}
	if n := leasesIn(w); n != 1 {
		t.Fatalf("%d queues in the lease wakes after three parks, want the one", n)
	}
	done := q.doneChan()
	select {
	case <-done:
		t.Fatal("the queue stopped before its lease ended")
	default:
	}
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("the parked queue outlived its lease")
	}
	if !e.clock.Now().After(sub.Expires) {
		t.Fatal("stopped before the lease ended")
	}
	if n := leasesIn(w); n != 0 {
		t.Fatalf("%d queues in the lease wakes once the only one finished", n)
	}
}

// waitDeliveredParked waits until q delivered seq and parked.
func waitDeliveredParked(t *testing.T, q *queue, seq uint64) {
	t.Helper()
	testenv.Eventually(t, wait, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.stats.Cursor.Seq == seq && q.parked != nil
	}, "delivered %d and parked", seq)
}

// leasesIn counts the queues in w's lease wakes.
func leasesIn(w *Webhooks) int {
	w.leases.mu.Lock()
	defer w.leases.mu.Unlock()
	return len(w.leases.h)
}

// A queue stays in the lease wakes while it is woken and parks again, and
// leaves them when it finishes before its lease ends (deactivated).
func TestWebhooks_FinishedQueueLeavesTheLeaseWakes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "") // lease of an hour
	w, _ := e.start(e.fastConfig())
	var q *queue
	testenv.Eventually(t, wait, func() bool { q = w.queueFor(sub.ID); return q != nil }, "the queue")
	waitDeliveredParked(t, q, e.publish(topic, "feed", 0, 1)[0])
	if n := leasesIn(w); n != 1 {
		t.Fatalf("%d queues in the lease wakes, want the parked one", n)
	}
	w.Deactivate(sub.ID)
	select {
	case <-q.doneChan():
	case <-time.After(wait):
		t.Fatal("the deactivated queue did not finish")
	}
	if n := leasesIn(w); n != 0 {
		t.Fatalf("%d queues in the lease wakes after the only one finished an hour before its lease end", n)
	}
}
