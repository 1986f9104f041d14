package delivery

import (
	"container/heap"
	"sync"
	"time"
)

// leaseWakes wakes parked queues at the end of their lease with one timer
// for them all, where a timer each cost a hub of many idle subscriptions
// a runtime timer per subscription. A queue is in it from a park with a
// lease end ahead (park) until that end comes or the queue finishes: a
// queue woken to deliver stays in, so that parking again with the same
// lease end costs no heap operation; the end signals it as it signals a
// parked one, and a running queue takes that as one more wake-up.
type leaseWakes struct {
	base  time.Time // lease ends are durations since base, on the monotonic clock
	mu    sync.Mutex
	h     leaseHeap
	timer *time.Timer   // fires at h[0]'s lease end; nil while h is empty
	at    time.Duration // when timer fires; 0: not armed
}

// leaseHeap orders queues by the end of their lease (queue.leaseAt); each
// queue's leaseIdx is its index, -1 when out.
type leaseHeap []*queue

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].leaseAt < h[j].leaseAt }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].leaseIdx, h[j].leaseIdx = i, j
}
func (h *leaseHeap) Push(x any) {
	q := x.(*queue)
	q.leaseIdx = len(*h)
	*h = append(*h, q)
}
func (h *leaseHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	q.leaseIdx = -1
	return q
}

// set has q signalled at end, its lease's end, d from now (real time),
// unless it is in for that end already; q.mu is held.
func (l *leaseWakes) set(q *queue, end time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q.leaseIdx >= 0 && q.leaseFor.Equal(end) {
		return
	}
	q.leaseAt, q.leaseFor = time.Since(l.base)+d, end
	if q.leaseIdx >= 0 {
		heap.Fix(&l.h, q.leaseIdx)
	} else {
		heap.Push(&l.h, q)
	}
	l.armLocked()
}

// remove takes q out, if in.
func (l *leaseWakes) remove(q *queue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q.leaseIdx >= 0 {
		heap.Remove(&l.h, q.leaseIdx)
		l.armLocked()
	}
}

// armLocked sets the timer to the earliest lease end; l.mu is held.
func (l *leaseWakes) armLocked() {
	if len(l.h) == 0 {
		if l.timer != nil {
			l.timer.Stop()
			l.timer = nil
		}
		return
	}
	at := l.h[0].leaseAt
	switch {
	case l.timer == nil:
		l.timer = time.AfterFunc(at-time.Since(l.base), l.fire)
	case at != l.at:
		l.timer.Reset(at - time.Since(l.base))
	default:
		return
	}
	l.at = at
}

// fire signals the queues whose lease has ended.
func (l *leaseWakes) fire() {
	var due []*queue
	l.mu.Lock()
	now := time.Since(l.base)
	for len(l.h) > 0 && l.h[0].leaseAt <= now {
		due = append(due, heap.Pop(&l.h).(*queue))
	}
	l.at = 0 // the timer has fired: arm it again
	l.armLocked()
	l.mu.Unlock()
	for _, q := range due {
		q.signal()
	}
}
