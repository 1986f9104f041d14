package delivery

import (
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// Parked queues are signalled at the end of their lease, earliest first,
// by one timer: a queue taken out before its end is not, and one whose end
// is far keeps the timer armed for it alone.
func TestLeaseWakes_SignalEachAtItsLeaseEnd(t *testing.T) {
	t.Parallel()
	w := &Webhooks{leases: leaseWakes{base: time.Now()}}
	newQ := func() *queue { return &queue{w: w, wake: make(chan struct{}, 1), leaseIdx: -1} }
	soon, later, removed, far := newQ(), newQ(), newQ(), newQ()
	l := &w.leases
	add := func(q *queue, d time.Duration) { l.set(q, time.Now().Add(d), d) }
	add(far, time.Hour)
	add(later, 60*time.Millisecond)
	add(removed, 30*time.Millisecond)
	add(soon, 10*time.Millisecond)
	l.remove(removed)

	testenv.Eventually(t, wait, func() bool { return soon.signals.Load() == 1 && later.signals.Load() == 1 }, "soon and later signalled")
	if removed.signals.Load() != 0 || far.signals.Load() != 0 {
		t.Fatalf("signals: removed %d, far %d; want none", removed.signals.Load(), far.signals.Load())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.h) != 1 || l.h[0] != far || far.leaseIdx != 0 || l.timer == nil || l.at != far.leaseAt {
		t.Fatalf("after the near ends: %d queued, timer armed %v; want far alone, armed for it", len(l.h), l.timer != nil)
	}
	for _, q := range []*queue{soon, later, removed} {
		if q.leaseIdx != -1 {
			t.Errorf("a queue out of the heap has index %d", q.leaseIdx)
		}
	}
}

// A queue woken and parked again with the same lease end keeps its place
// (no heap operation); a new lease end moves it; a queue that finishes
// leaves. A queue that delivers a notification and parks again stays in,
// and the end of its lease still stops it.
func TestLeaseWakes_QueueStaysInAcrossWakesUntilItFinishes(t *testing.T) {
	t.Parallel()
	w := &Webhooks{leases: leaseWakes{base: time.Now()}}
	q := &queue{w: w, wake: make(chan struct{}, 1), leaseIdx: -1}
	other := &queue{w: w, wake: make(chan struct{}, 1), leaseIdx: -1}
	l := &w.leases
	end := time.Now().Add(time.Hour)
	l.set(q, end, time.Hour)
	l.set(other, end.Add(time.Minute), time.Hour+time.Minute)
	at := q.leaseAt
	l.set(q, end, time.Hour-time.Second) // parked again, same lease
	if q.leaseAt != at || q.leaseIdx != 0 || len(l.h) != 2 {
		t.Fatalf("parking again with the same lease end moved the queue: at %v (was %v), index %d, %d in", q.leaseAt, at, q.leaseIdx, len(l.h))
	}
	l.set(q, end.Add(2*time.Minute), time.Hour+2*time.Minute) // renewed
	if q.leaseIdx != 1 || l.h[0] != other || l.at != other.leaseAt {
		t.Fatalf("a renewed lease did not move the queue behind the other: index %d", q.leaseIdx)
	}
	l.remove(q)
	if q.leaseIdx != -1 || len(l.h) != 1 {
		t.Fatalf("a finished queue stayed in: index %d, %d in", q.leaseIdx, len(l.h))
	}
}
