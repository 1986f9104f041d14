package delivery

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

func TestHostLimit_BoundsPerHostOnly(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// A slot kept after a delivery stays with its queue for a turn of
// keptTurn attempts in a row while goroutines wait for the host, for as
// long as it delivers while none do. A goroutine already waiting gets the
// slot from the attempt that ends the turn (kept returns none); one that
// comes to wait after the turn is over gets it before the queue's next
// attempt, which then waits its turn (reacquire).
func TestHostLimit_KeptSlotGoesToWaitingGoroutinesAfterATurn(t *testing.T) {
	t.Parallel()
	l := newHostLimit(1, 1, 1, 0)
	ctx := context.Background()
	ok := attempt{status: 200}
	waiting := func() int { return hostWaitingOf(l, "h") }
	next := func(k hostSlot) hostSlot { // the next attempt with a kept slot
		t.Helper()
		k, err := l.reacquire(ctx, k, "h")
		if err != nil {
			t.Fatal(err)
		}
		return k.kept(ok, time.Millisecond, time.Now())
	}
	waiter := func(got chan<- hostSlot) {
		go func() {
			o, _ := l.acquire(ctx, "h")
			got <- o
		}()
		testenv.Eventually(t, wait, func() bool { return waiting() == 1 }, "a goroutine waits")
	}

	// the turn's last attempt hands the slot to the goroutine waiting
	s, _ := l.acquire(ctx, "h")
	k := s.kept(ok, time.Millisecond, time.Now())
	other := make(chan hostSlot, 1)
	waiter(other)
	for i := 2; i < keptTurn; i++ {
		if k = next(k); k.l == nil {
			t.Fatalf("attempt %d of a turn of %d gave the slot up", i, keptTurn)
		}
	}
	if k = next(k); k.l != nil {
		t.Fatal("a slot was kept past a turn while a goroutine waited for the host")
	}
	o := <-other
	if l.inUse("h") != 1 {
		t.Fatalf("in use %d, want 1", l.inUse("h"))
	}

	// alone, a queue keeps it past a turn; a goroutine that comes to wait
	// gets it before the queue's next attempt
	k = o.kept(ok, time.Millisecond, time.Now())
	for range 2 * keptTurn {
		if k = next(k); k.l == nil {
			t.Fatal("a queue alone on its host gave its slot up")
		}
	}
	late := make(chan hostSlot, 1)
	waiter(late)
	mine := make(chan hostSlot, 1)
	go func() {
		m, _ := l.reacquire(ctx, k, "h")
		mine <- m
	}()
	o = <-late
	testenv.Eventually(t, wait, func() bool { return waiting() == 1 }, "the queue waits its turn")
	select {
	case <-mine:
		t.Fatal("the queue got the slot while the goroutine held it")
	default:
	}
	o.release()
	(<-mine).release()
	if n := l.inUse("h"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}

// A slot is not kept once the host's limit went down below the slots in
// use (a 429 halved it): kept gives it back, so the lower limit holds
// from the next attempt on.
func TestHostLimit_KeptSlotGivenBackOverALoweredLimit(t *testing.T) {
	t.Parallel()
	l := newHostLimit(4, 1, 4, 0)
	ctx := context.Background()
	var slots []hostSlot
	for range 4 {
		s, err := l.acquire(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	slots[3].done(attempt{status: http.StatusTooManyRequests}, time.Millisecond, time.Now())
	if got := l.stats()[0].Limit; got != 2 {
		t.Fatalf("limit %d after a 429, want 2", got)
	}
	if k := slots[0].kept(attempt{status: 200}, time.Millisecond, time.Now()); k.l != nil {
		t.Fatal("a slot was kept with 3 in use over a limit of 2")
	}
	if k := slots[1].kept(attempt{status: 200}, time.Millisecond, time.Now()); k.l == nil {
		t.Fatal("a slot within the limit was given back")
	} else {
		k.release()
	}
	slots[2].release()
	if n := l.inUse("h"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}

// hostWaitingOf returns the waiters of host in l.
func hostWaitingOf(l *hostLimit, host string) int {
	for _, h := range l.stats() {
		if h.Host == host {
			return h.Waiting
		}
	}
	return 0
}

// A host back from idle ramps up from its start: the slots each answer
// adds are handed to the host's waiters as the answer comes, also when
// the answering request keeps its slot for its queue's next attempt
// (kept), not only once a slot is given back.
func TestHostLimit_RampGrantsAsAnswersCome(t *testing.T) {
	t.Parallel()
	l := newHostLimit(4, 1, 64, 0)
	ctx := context.Background()
	now := time.Now()
	l.hosts["a"] = &hostSem{used: now, adapt: hostAdapt{limit: 20, srtt: time.Millisecond, minNow: time.Millisecond,
		window: now, idleAt: now.Add(-time.Second)}}
	slots := make([]hostSlot, 4)
	for i := range slots {
		var err error
		if slots[i], err = l.acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan hostSlot, 1)
	go func() {
		s, err := l.acquire(ctx, "a") // the ramp starts at 4: this one waits
		if err == nil {
			got <- s
		}
	}()
	testenv.Eventually(t, wait, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.hosts["a"].waiting.len() == 1
	}, "a fifth request waits while the ramp is at 4")
	if h := slots[0].kept(attempt{status: http.StatusNoContent}, time.Millisecond, time.Now()); h.s == nil {
		t.Fatal("the answering request lost its slot")
	}
	select {
	case s := <-got:
		s.release()
	case <-time.After(wait):
		t.Fatal("the slot the answer added was not handed to the waiter")
	}
	for _, s := range slots {
		s.release()
	}
	if n := l.inUse("a"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}
