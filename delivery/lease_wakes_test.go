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
	w := &Webhooks{leases: leaseWakes{base: time.Now()}}
	newQ := func() *queue { return &queue{w: w, wake: make(chan struct{}, 1), leaseIdx: -1} }
	soon, later, removed, far := newQ(), newQ(), newQ(), newQ()
	l := &w.leases
	l.add(far, time.Hour)
	l.add(later, 60*time.Millisecond)
	l.add(removed, 30*time.Millisecond)
	l.add(soon, 10*time.Millisecond)
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
