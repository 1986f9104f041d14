package delivery

import "slices"

// waiter waits for a slot of a host: a goroutine, whose ready (buffered
// 1) receives when the slot is handed over, or a queue q lined from its
// parked state st (line).
type waiter struct {
	ready chan struct{}
	q     *queue
	st    *runState
}

// fifo is the waiters of a host in arrival order, over an array reused
// from its start whenever it empties.
type fifo struct {
	items []waiter
	head  int
}

func (f *fifo) len() int { return len(f.items) - f.head }

func (f *fifo) push(w waiter) { f.items = append(f.items, w) }

// first returns the oldest; f is not empty.
func (f *fifo) first() waiter { return f.items[f.head] }

// pop removes and returns the oldest; f is not empty.
func (f *fifo) pop() waiter {
	c := f.items[f.head]
	f.items[f.head] = waiter{}
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	return c
}

// remove removes the waiter of c's channel or queue, one that gave up.
func (f *fifo) remove(c waiter) {
	live := slices.DeleteFunc(f.items[f.head:], func(x waiter) bool { return x.ready == c.ready && x.q == c.q })
	f.items = f.items[:f.head+len(live)]
	if f.len() == 0 {
		f.items, f.head = f.items[:0], 0
	}
}
