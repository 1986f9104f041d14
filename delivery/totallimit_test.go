package delivery

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// The cap over all hosts grows while a host waits for room under it and
// the hub's goroutines get a core quickly, by one per answer in slow start
// and by about one per cap's worth of answers after; holds while they
// wait; is cut by a quarter, at most once per probe interval and never
// below its start, while they wait long; and starts again from its start
// after an idle spell.
func TestTotalAdapt_GrowsHoldsCutsAndRestarts(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	a := newTotalAdapt(2)
	if a.slots() != 2*totalPerCore {
		t.Fatalf("start = %d, want %d", a.slots(), 2*totalPerCore)
	}
	start := a.limit
	a.observe(0, 0, false, now)
	if a.limit != start {
		t.Fatalf("grew to %v unsaturated", a.limit)
	}
	for range 10 {
		a.observe(schedQuick/2, 0, true, now)
	}
	if a.limit != start+10 {
		t.Fatalf("slow start: %v, want %v", a.limit, start+10)
	}
	a.observe(schedQuick+time.Microsecond, 0, true, now)
	if a.limit != start+10 || !a.backedOff {
		t.Fatalf("held: %v backedOff %v", a.limit, a.backedOff)
	}
	a.observe(0, 0, true, now)
	if want := start + 10 + 1/(start+10); a.limit != want {
		t.Fatalf("after back-off: %v, want %v", a.limit, want)
	}
	a.limit = 100
	a.observe(schedSlow+time.Microsecond, 0, true, now.Add(time.Second))
	a.observe(schedSlow+time.Microsecond, 0, true, now.Add(time.Second+time.Millisecond))
	if a.limit != 75 {
		t.Fatalf("cut once within the probe interval: %v, want 75", a.limit)
	}
	for i := range 20 {
		a.observe(schedSlow+time.Microsecond, 0, true, now.Add(time.Duration(2+i)*time.Second))
	}
	if a.limit != start {
		t.Fatalf("cut below start: %v", a.limit)
	}
	a.observe(time.Hour, 0, true, now.Add(time.Minute))
	if a.limit != start {
		t.Fatalf("cut below start: %v", a.limit)
	}
	// the answer of a host whose fastest answer waits on the network far
	// longer than on the hub's cores counts as quick
	a.observe(2*schedSlow, rttPerLag*2*schedSlow+time.Millisecond, true, now.Add(2*time.Minute))
	if a.limit != start+1/start {
		t.Fatalf("a distant host's answer: %v, want %v", a.limit, start+1/start)
	}
	a.observe(2*schedSlow, rttPerLag*2*schedSlow, true, now.Add(3*time.Minute))
	if a.limit != start {
		t.Fatalf("a nearby host's answer while the cores wait long: %v, want it cut back to %v", a.limit, start)
	}
	a.limit = 90
	a.resume(now)
	a.rest(now)
	a.resume(now.Add(restartIdle / 2))
	if a.limit != 90 {
		t.Fatalf("restarted after %v idle", restartIdle/2)
	}
	a.rest(now)
	a.resume(now.Add(restartIdle))
	if a.limit != start || a.backedOff {
		t.Fatalf("after idle: %v backedOff %v, want %v and slow start", a.limit, a.backedOff, start)
	}
}

// Hosts wait for room under the cap over all hosts in arrival order, and
// a slot given back on one host goes to another host's waiter.
func TestHostLimit_CapOverAllHosts(t *testing.T) {
	t.Parallel()
	l := newHostLimit(4, 1, 4, 0)
	l.total = totalAdapt{start: 2, limit: 2}
	ctx := context.Background()
	ra, _ := l.acquire(ctx, "a")
	rb, _ := l.acquire(ctx, "b")
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := l.acquire(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third acquire = %v, want deadline exceeded", err)
	}
	got := make(chan hostSlot)
	go func() {
		rc, err := l.acquire(ctx, "c")
		if err != nil {
			t.Error(err)
		}
		got <- rc
	}()
	// c is starved once it waits; then a's slot goes to it
	testenv.Eventually(t, time.Minute, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.hosts["c"] != nil && l.hosts["c"].starved
	})
	ra.release()
	rc := <-got
	if n := l.inUse("c"); n != 1 {
		t.Fatalf("c in use %d", n)
	}
	rb.release()
	rc.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight != 0 || len(l.starved) != 0 {
		t.Fatalf("in flight %d, starved %d after every release", l.inFlight, len(l.starved))
	}
}

// A queue keeping its slot for its backlog gives it up once its turn is
// over while another host waits for room under the cap over all hosts.
func TestHostLimit_KeptSlotGivesWayToAStarvedHost(t *testing.T) {
	t.Parallel()
	l := newHostLimit(1, 1, 1, 0)
	l.total = totalAdapt{start: 1, limit: 1}
	// the hub's goroutines wait long for a core: the cap does not grow
	l.probe.lag, l.probe.at = 2*schedSlow, time.Now().Add(time.Hour)
	ctx := context.Background()
	ha, _ := l.acquire(ctx, "a")
	got := make(chan hostSlot)
	go func() {
		hb, err := l.acquire(ctx, "b")
		if err != nil {
			t.Error(err)
		}
		got <- hb
	}()
	testenv.Eventually(t, time.Minute, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.starved) == 1 })
	for i := 1; i < keptTurn; i++ {
		if ha = ha.kept(attempt{}, time.Millisecond, time.Now()); ha.l == nil {
			t.Fatalf("gave the slot up after %d attempts, before its turn of %d ended", i, keptTurn)
		}
	}
	if ha = ha.kept(attempt{}, time.Millisecond, time.Now()); ha.l != nil {
		t.Fatal("kept the slot past its turn while host b waits")
	}
	hb := <-got
	hb.release()
	if n := l.inUse("a") + l.inUse("b"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}

// Hosts waiting for room under the cap over all hosts take turns: a
// host's next waiter queues behind the hosts that waited before it.
func TestHostLimit_HostsTakeTurnsForTheCap(t *testing.T) {
	t.Parallel()
	l := newHostLimit(4, 1, 4, 0)
	l.total = totalAdapt{start: 1, limit: 1}
	l.probe.lag, l.probe.at = 2*schedSlow, time.Now().Add(time.Hour) // no growth
	ctx := context.Background()
	first, _ := l.acquire(ctx, "a")
	order := make(chan string, 3)
	// a2, a3 wait on host a, then b1 on host b
	for _, host := range []string{"a", "a", "b"} {
		n := waiting(l) + 1
		go func() {
			h, err := l.acquire(ctx, host)
			if err != nil {
				t.Error(err)
				return
			}
			order <- host
			h.release()
		}()
		testenv.Eventually(t, time.Minute, func() bool { return waiting(l) == n })
	}
	first.release()
	got := []string{<-order, <-order, <-order}
	if got[0] != "a" || got[1] != "b" || got[2] != "a" {
		t.Fatalf("turns %v, want [a b a]", got)
	}
}

// waiting counts the waiters of every host of l.
func waiting(l *hostLimit) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.hosts {
		n += s.waiting.len()
	}
	return n
}
