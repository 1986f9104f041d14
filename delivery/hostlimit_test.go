package delivery

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestHostLimit_BoundsPerHostOnly(t *testing.T) {
	l := newHostLimit(2, 2, 2, 0) // fixed: floor = ceiling
	ctx := context.Background()
	r1, _ := l.acquire(ctx, "a")
	r2, _ := l.acquire(ctx, "a")
	if n := l.inUse("a"); n != 2 {
		t.Fatalf("inUse = %d", n)
	}
	// Host a is full; host b is not affected.
	rb, err := l.acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	rb.release()
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := l.acquire(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third acquire = %v, want deadline exceeded", err)
	}
	got := make(chan struct{})
	go func() {
		r3, err := l.acquire(ctx, "a")
		if err == nil {
			r3.release()
		}
		close(got)
	}()
	r1.release()
	<-got
	r2.release()
	if n := l.inUse("a") + l.inUse("b"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}

// The waiters of a host leave in arrival order, one that gave up leaves
// from wherever it is, goroutines and lined queues alike, and the array is
// reused once the queue empties.
func TestFIFO_OrderRemoveAndReuse(t *testing.T) {
	var f fifo
	ws := make([]waiter, 6)
	for i := range ws {
		if i%2 == 0 {
			ws[i] = waiter{ready: make(chan struct{}, 1)}
		} else {
			ws[i] = waiter{q: &queue{id: strconv.Itoa(i)}}
		}
		f.push(ws[i])
	}
	if f.pop() != ws[0] {
		t.Fatal("not the oldest first")
	}
	f.remove(ws[2])
	f.remove(ws[3])
	f.remove(waiter{ready: make(chan struct{})}) // not waiting: nothing changes
	f.remove(waiter{q: &queue{}})
	for _, want := range []int{1, 4, 5} {
		if f.len() == 0 || f.pop() != ws[want] {
			t.Fatalf("waiter %d not next", want)
		}
	}
	if f.len() != 0 || f.head != 0 || cap(f.items) == 0 {
		t.Fatalf("empty queue: len %d head %d cap %d, want the array kept from its start", f.len(), f.head, cap(f.items))
	}
	f.push(ws[0])
	f.remove(ws[0])
	if f.len() != 0 || f.head != 0 {
		t.Fatalf("after the only waiter gave up: len %d head %d", f.len(), f.head)
	}
}
