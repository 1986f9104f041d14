package delivery

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// lineSetup is n subscriptions of one channel on one callback host of
// two slots, every queue parked after a first notification, and a gate
// that holds the callback's answers to later ones until open is called.
type lineSetup struct {
	e     *env
	r     *receiver
	w     *Webhooks
	stop  func()
	ids   []string
	first uint64
	open  func()
}

func newLineSetup(t *testing.T, n int) *lineSetup {
	e := newEnv(t)
	e.channel(topic, "feed")
	gate := make(chan struct{})
	s := &lineSetup{e: e, open: sync.OnceFunc(func() { close(gate) })}
	s.r = newReceiver(t, func(_ int, d delivery) int {
		if d.Header.Get(wire.HeaderSeq) != strconv.FormatUint(s.first, 10) {
			<-gate
		}
		return 200
	})
	t.Cleanup(s.open) // before the receiver closes
	for i := range n {
		s.ids = append(s.ids, e.subscribe(topic, s.r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	s.first = e.publish(topic, "feed", 0, 1)[0]
	cfg := e.fastConfig()
	cfg.PerHostMin, cfg.PerHostMax = 2, 2
	s.w, s.stop = e.start(cfg)
	testenv.Eventually(t, wait, func() bool { p, all := parkedCount(s.w); return all == n && p == n }, "every queue delivered and parked")
	return s
}

// waitParkedAt waits until every queue's cursor is at seq and every queue
// is parked again.
func (s *lineSetup) waitParkedAt(t *testing.T, seq uint64) {
	t.Helper()
	testenv.Eventually(t, wait, func() bool {
		for _, id := range s.ids {
			if s.e.cursor(id).Seq != seq {
				return false
			}
		}
		p, all := parkedCount(s.w)
		return all == len(s.ids) && p == len(s.ids)
	}, "every queue delivered and parked again at %d", seq)
}

// running returns the queues that have a goroutine (begin gave them a
// context), by ID.
func running(w *Webhooks) map[string]bool {
	w.mu.Lock()
	qs := make([]*queue, 0, len(w.queues))
	for _, q := range w.queues {
		qs = append(qs, q)
	}
	w.mu.Unlock()
	out := map[string]bool{}
	for _, q := range qs {
		q.mu.Lock()
		if q.cancelRun != nil {
			out[q.id] = true
		}
		q.mu.Unlock()
	}
	return out
}

// hostWaiting returns the in-flight and waiting deliveries of the one
// callback host.
func hostWaiting(w *Webhooks) (inFlight, waiting int) {
	for _, h := range w.Hosts() {
		inFlight, waiting = inFlight+h.InFlight, waiting+h.Waiting
	}
	return inFlight, waiting
}

// An append to a channel whose subscriptions share a host of two slots
// starts two goroutines, not one per subscription: the others wait in the
// host's line, parked, each started when a slot is handed to it. Every
// subscription still gets every notification, in order.
func TestWebhooks_WokenQueuesWaitForASlotWithoutAGoroutine(t *testing.T) {
	t.Parallel()
	const n = 60
	s := newLineSetup(t, n)
	next := s.e.publish(topic, "feed", 1, 1)[0]
	testenv.Eventually(t, wait, func() bool { f, wt := hostWaiting(s.w); return f == 2 && wt == n-2 && s.r.count() == n+2 }, "two in flight, the rest waiting")
	if got := len(running(s.w)); got != 2 {
		t.Fatalf("%d queues have a goroutine while the host has 2 slots, want 2", got)
	}
	s.open()
	s.waitParkedAt(t, next)
	perPath := map[string][]string{}
	for _, d := range s.r.all() {
		perPath[d.Path] = append(perPath[d.Path], d.Header.Get(wire.HeaderSeq))
	}
	want := []string{strconv.FormatUint(s.first, 10), strconv.FormatUint(next, 10)}
	if len(perPath) != n {
		t.Fatalf("%d callbacks got deliveries, want %d", len(perPath), n)
	}
	for path, got := range perPath {
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("%s got seqs %v, want %v", path, got, want)
		}
	}
}

// A queue that delivered and parks hands its slot to the next queue in
// its host's line and runs it on its own goroutine: an append to a channel
// whose subscriptions share a host of two slots takes two runners in all,
// not one per subscription, and every subscription still gets the
// notification once.
func TestWebhooks_ParkingQueueRunsTheNextInLine(t *testing.T) {
	t.Parallel()
	const n = 40
	s := newLineSetup(t, n)
	l := s.w.limit
	started0, handed0 := l.started.Load()+l.reused.Load(), l.handed.Load()
	next := s.e.publish(topic, "feed", 1, 1)[0]
	s.open()
	s.waitParkedAt(t, next)
	started, handed := l.started.Load()+l.reused.Load()-started0, l.handed.Load()-handed0
	if started != 2 || handed != n-2 {
		t.Fatalf("lined queues: %d given a runner of their own, %d run by a queue that parked; want 2 and %d", started, handed, n-2)
	}
	if f, wt := hostWaiting(s.w); f != 0 || wt != 0 {
		t.Fatalf("after the fan-out: %d in flight, %d waiting, want none", f, wt)
	}
	if got := s.r.count(); got != 2*n {
		t.Fatalf("%d deliveries, want %d (two notifications to each of %d)", got, 2*n, n)
	}
}

// The runners of one fan-out run the next one's queues: they wait idle for
// lined queues instead of ending, and end when the engine stops.
func TestWebhooks_LinedQueuesRunOnIdleRunners(t *testing.T) {
	t.Parallel()
	const n = 10
	s := newLineSetup(t, n)
	s.open()
	l := s.w.limit
	s.waitParkedAt(t, s.e.publish(topic, "feed", 1, 1)[0])
	testenv.Eventually(t, wait, func() bool { return l.idle.Load() == 2 }, "the fan-out's two runners idle")
	started0, reused0 := l.started.Load(), l.reused.Load()
	s.waitParkedAt(t, s.e.publish(topic, "feed", 2, 1)[0])
	if started, reused := l.started.Load()-started0, l.reused.Load()-reused0; started != 0 || reused != 2 {
		t.Fatalf("second fan-out: %d runners started, %d idle ones reused; want 0 and 2", started, reused)
	}
	s.stop()
	testenv.Eventually(t, wait, func() bool { return l.live.Load() == 0 }, "the idle runners ended with the engine")
}

// A queue waiting in its host's line stops at once when deactivated or
// when the engine stops, without waiting for a slot, and is not delivered
// to afterwards.
func TestWebhooks_LinedQueuesStopWithoutASlot(t *testing.T) {
	t.Parallel()
	const n = 30
	s := newLineSetup(t, n)
	s.e.publish(topic, "feed", 1, 1)
	testenv.Eventually(t, wait, func() bool { f, wt := hostWaiting(s.w); return f == 2 && wt == n-2 && s.r.count() == n+2 }, "two in flight, the rest waiting")
	busy := running(s.w)
	var lined []string
	for _, id := range s.ids {
		if !busy[id] && len(lined) < 5 {
			lined = append(lined, id)
		}
	}
	for _, id := range lined {
		s.w.mu.Lock()
		q := s.w.queues[id]
		s.w.mu.Unlock()
		s.w.Deactivate(id)
		select {
		case <-q.doneChan():
		case <-time.After(wait):
			t.Fatalf("a lined queue deactivated did not finish while the host had no slot")
		}
	}
	if _, wt := hostWaiting(s.w); wt != n-2-len(lined) {
		t.Fatalf("%d waiting after %d lined queues stopped, want %d", wt, len(lined), n-2-len(lined))
	}
	stopped := make(chan struct{})
	go func() { s.stop(); close(stopped) }()
	select { // the two in flight are cut after Grace (1s); the lined end at once
	case <-stopped:
	case <-time.After(wait):
		t.Fatal("the engine did not stop with queues waiting in a host's line")
	}
	s.open()
	for _, d := range s.r.all() {
		for _, id := range lined {
			if d.Path == "/cb/"+strconv.Itoa(indexOf(s.ids, id)) && d.Header.Get(wire.HeaderSeq) != strconv.FormatUint(s.first, 10) {
				t.Fatalf("deactivated %s got seq %s", d.Path, d.Header.Get(wire.HeaderSeq))
			}
		}
	}
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// A queue woken with nothing to deliver gives its slot back as it parks
// again: woken over and over, it leaks no slot of its host.
func TestWebhooks_LinedQueueWithNothingToDeliverGivesItsSlotBack(t *testing.T) {
	t.Parallel()
	s := newLineSetup(t, 3)
	s.w.mu.Lock()
	q := s.w.queues[s.ids[0]]
	s.w.mu.Unlock()
	for range 300 {
		q.signal()
	}
	testenv.Eventually(t, wait, func() bool {
		f, wt := hostWaiting(s.w)
		p, _ := parkedCount(s.w)
		return f == 0 && wt == 0 && p == 3
	}, "no slot in use, nothing waiting, every queue parked")
	next := s.e.publish(topic, "feed", 1, 1)[0]
	s.open()
	testenv.Eventually(t, wait, func() bool {
		for _, id := range s.ids {
			if s.e.cursor(id).Seq != next {
				return false
			}
		}
		return true
	}, "the host's two slots still deliver")
}

// A fan-out lines the queues it woke in one pass after waking them all: a
// queue deactivated in between, woken but not lined yet, is finished by
// the goroutine its line starts, without a delivery, and gives the slot
// it got back; the others go on delivering.
func TestWebhooks_QueueStoppedBeforeItsLineFinishesOnItsSlot(t *testing.T) {
	t.Parallel()
	s := newLineSetup(t, 3)
	s.open()
	s.w.mu.Lock()
	q := s.w.queues[s.ids[0]]
	s.w.mu.Unlock()
	j, ok := q.wakeUnlined()
	if !ok {
		t.Fatal("a parked queue woken was not to be lined")
	}
	s.w.Deactivate(q.id)
	select {
	case <-q.doneChan():
		t.Fatal("a queue woken for its line finished before it was lined: its line would run a finished queue")
	default:
	}
	s.w.limit.line(j)
	select {
	case <-q.doneChan():
	case <-time.After(wait):
		t.Fatal("a queue stopped before its line did not finish once lined")
	}
	next := s.e.publish(topic, "feed", 1, 1)[0]
	for _, id := range s.ids[1:] {
		testenv.Eventually(t, wait, func() bool { return s.e.cursor(id).Seq == next }, "%s delivered %d", id, next)
	}
	testenv.Eventually(t, wait, func() bool { f, wt := hostWaiting(s.w); return f == 0 && wt == 0 }, "no slot in use, nothing waiting")
	for _, d := range s.r.all() {
		if d.Path == "/cb/0" && d.Header.Get(wire.HeaderSeq) != strconv.FormatUint(s.first, 10) {
			t.Fatalf("the stopped queue got seq %s", d.Header.Get(wire.HeaderSeq))
		}
	}
}

// The dispatcher lines the queues it wakes wakeChunk at a time, the first
// chunk as soon as it is woken, not once every queue of the fan-out is:
// 2 × wakeChunk + 1 parked queues are lined in chunks of wakeChunk,
// wakeChunk and 1, each lined queue woken once, and every one delivers
// the next notification.
func TestWebhooks_WakeLinesTheFirstQueuesBeforeTheRestAreWoken(t *testing.T) {
	t.Parallel()
	n := 2*wakeChunk + 1
	s := newLineSetup(t, n)
	s.open()
	s.w.mu.Lock()
	var sc wakeScratch
	for _, id := range s.ids {
		sc.qs = append(sc.qs, s.w.queues[id])
	}
	s.w.mu.Unlock()
	var chunks []int
	lined := map[*queue]int{}
	sc.wake(func(jobs ...lineJob) {
		chunks = append(chunks, len(jobs))
		for _, j := range jobs {
			lined[j.q]++
			if j.q.signals.Load() == 0 {
				t.Errorf("queue %s lined before it was woken", j.q.id)
			}
		}
		woken := 0
		for _, q := range sc.qs {
			if q.signals.Load() > 0 {
				woken++
			}
		}
		if len(chunks) == 1 && woken != wakeChunk {
			t.Errorf("the first chunk was lined once %d queues were woken, want %d", woken, wakeChunk)
		}
		s.w.limit.line(jobs...)
	})
	if want := []int{wakeChunk, wakeChunk, 1}; !slices.Equal(chunks, want) {
		t.Fatalf("lined in chunks of %v, want %v", chunks, want)
	}
	if len(sc.qs) != 0 || len(sc.jobs) != 0 {
		t.Fatalf("the scratch holds %d queues and %d jobs after the wake, want none", len(sc.qs), len(sc.jobs))
	}
	for q, k := range lined {
		if k != 1 {
			t.Fatalf("queue %s lined %d times", q.id, k)
		}
	}
	if len(lined) != n {
		t.Fatalf("%d queues lined, want %d", len(lined), n)
	}
	next := s.e.publish(topic, "feed", 1, 1)[0]
	s.waitParkedAt(t, next)
}
