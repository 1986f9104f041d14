package delivery

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// DefaultPerHost is the default number of concurrent requests a callback
// host starts with; it adapts between Config.PerHostMin and PerHostMax
// (hostadapt.go).
const DefaultPerHost = 8

// hostIdleTTL is how long an idle host keeps what its limit learnt.
const hostIdleTTL = time.Minute

// hostLimit bounds the concurrent requests to each callback host with an
// adaptive limit per host (hostadapt.go). Waiters are served in arrival
// order, each woken only when a slot is its own, so a host with a thousand
// waiting queues wakes one per freed slot. A waiter is a goroutine
// (acquire) or a parked queue woken for more (line): that one gets no
// goroutine until a slot is handed to it, so an append to a channel whose
// thousand subscriptions share a host starts as many goroutines as the
// host has slots free; a queue that parks hands its slot to the next one
// in line on its own goroutine (hostSlot.handOn). Over all hosts, a cap
// that follows the hub's own scheduling delay bounds the requests in
// flight (totallimit.go): a host with free slots of its own waits for
// room under it in line with the others (starved), and a queue that parks
// hands its slot's room to the first of them on its goroutine. A host's state stays
// while it is in use and for hostIdleTTL after, so the map follows the
// hosts recently delivered to.
type hostLimit struct {
	bounds    bounds
	perSecond float64 // requests a second to each host (rate.go); 0: no limit

	mu    sync.Mutex
	hosts map[string]*hostSem
	// total is the cap on requests in flight over all hosts (0: none),
	// inFlight those in flight; starved holds the hosts with waiters and
	// free slots of their own that wait for room under total, in order.
	total    totalAdapt
	probe    *schedProbe
	inFlight int
	starved  []*hostSem
	swept    time.Time
	// ready holds the channels of waiters that got their slot, empty
	// again, for the next waiters.
	ready sync.Pool
	// runners is where idle runners wait for a lined queue to run
	// (runLined); closing stopped ends them.
	runners chan lineJob
	stopped chan struct{}
	stop    sync.Once
	// started counts the runners started for lined queues, reused the
	// lined queues an idle runner took (runLined), handed those run on
	// the goroutine of a queue that parked (handOn); live is the runners
	// running or idle, idle those waiting. For tests.
	started, reused, handed atomic.Uint64
	live, idle              atomic.Int64
}

// lineJob is a lined queue q to run from its parked state st with slot.
type lineJob struct {
	q    *queue
	st   *runState
	slot hostSlot
}

// runnerIdle is how long a runner with no lined queue to run waits for one
// before it ends: a hub fanning notifications out at a steady rate runs
// each one's queues on the goroutines that ran the last one's, whose
// stacks have grown to what a delivery takes, instead of starting as many
// again; an idle hub keeps none.
const runnerIdle = 5 * time.Second

type hostSem struct {
	adapt    hostAdapt
	inFlight int
	waiting  fifo
	timer    *time.Timer
	used     time.Time     // last acquire or release
	pacer    *rate.Limiter // hostLimit.perSecond; nil without it
	pacing   int           // queues in hostLimit.pace
	starved  bool          // in hostLimit.starved
}

func newHostLimit(start, floor, ceiling int, perSecond float64) *hostLimit {
	if floor <= 0 {
		floor = DefaultPerHostMin
	}
	if ceiling <= 0 {
		ceiling = max(DefaultPerHostMax, floor)
	}
	ceiling = max(ceiling, floor)
	if start <= 0 {
		start = DefaultPerHost
	}
	return &hostLimit{total: newTotalAdapt(procs()), probe: newSchedProbe(), bounds: bounds{floor: floor, start: min(max(start, floor), ceiling), ceiling: ceiling}, perSecond: max(perSecond, 0), hosts: map[string]*hostSem{},
		ready:   sync.Pool{New: func() any { return make(chan struct{}, 1) }},
		runners: make(chan lineJob), stopped: make(chan struct{})}
}

// hostSlot is one request's slot for a host. Give it back exactly once:
// with done when the request was made, release when it was not, or
// handOn; or keep it (kept) for the queue's next attempt.
type hostSlot struct {
	l *hostLimit
	s *hostSem
	// reused counts the attempts a queue made with the slot in a row,
	// keeping it after each (kept); its next attempt takes it through
	// reacquire, which gives waiters their turn after keptTurn.
	reused int
}

// keptTurn is how many attempts in a row a queue with a backlog makes
// with its host's slot before it gives it to the host's waiters and waits
// its turn again: a turn of a few deliveries instead of one spares a
// goroutine switch per delivery, and holds the others back by a few
// deliveries at most.
const keptTurn = 4

// acquire waits for a slot for host, or for ctx to end.
func (l *hostLimit) acquire(ctx context.Context, host string) (hostSlot, error) {
	now := time.Now()
	l.mu.Lock()
	s := l.semLocked(host, now)
	if s.waiting.len() == 0 && s.inFlight < s.adapt.slots() && l.roomLocked() && !now.Before(s.adapt.pause) {
		l.takeLocked(s, now)
		l.mu.Unlock()
		return hostSlot{l: l, s: s}, nil
	}
	return l.waitLocked(ctx, s, host, now)
}

// reacquire takes h, a slot its queue kept from its last attempt (kept),
// for the queue's next attempt: at once when no one waits for the host,
// or the queue's turn (keptTurn) is not over, and the host's limit still
// allows it; else h goes to the host's first waiter and the queue waits
// at the back of the line, as acquire would, so that a queue with a
// backlog takes turns with the others.
func (l *hostLimit) reacquire(ctx context.Context, h hostSlot, host string) (hostSlot, error) {
	now := time.Now()
	l.mu.Lock()
	s := h.s
	s.used = now
	if (s.waiting.len() == 0 || h.reused < keptTurn) && s.inFlight <= s.adapt.slots() && !now.Before(s.adapt.pause) && l.keepsLocked(h) {
		l.mu.Unlock()
		return h, nil
	}
	s.inFlight--
	l.inFlight--
	l.feedLocked(now) // the hosts waiting for room under the cap go first
	return l.waitLocked(ctx, s, host, now)
}

// waitLocked queues the caller for a slot of s, host's state, and waits
// for it or for ctx to end; l.mu is held, and released.
func (l *hostLimit) waitLocked(ctx context.Context, s *hostSem, host string, now time.Time) (hostSlot, error) {
	ready := l.ready.Get().(chan struct{})
	s.waiting.push(waiter{ready: ready})
	l.grantLocked(s, now) // a pause that ended without its timer, a slot given back
	l.mu.Unlock()

	select {
	case <-ready:
		l.ready.Put(ready)
		return hostSlot{l: l, s: s}, nil
	case <-ctx.Done():
		l.mu.Lock()
		select {
		case <-ready: // handed over meanwhile: pass it on
			s.inFlight--
			l.inFlight--
			l.grantLocked(s, time.Now())
			l.feedLocked(time.Now())
		default:
			s.waiting.remove(waiter{ready: ready})
		}
		l.mu.Unlock()
		l.ready.Put(ready) // empty: no slot is handed to a waiter removed
		return hostSlot{}, fmt.Errorf("delivery: waiting for a slot for host %s: %w", host, ctx.Err())
	}
}

// semLocked returns host's state, made when the host is new, marked used
// at now. l.mu is held.
func (l *hostLimit) semLocked(host string, now time.Time) *hostSem {
	l.sweepLocked(now)
	s := l.hosts[host]
	if s == nil {
		s = &hostSem{adapt: hostAdapt{limit: float64(l.bounds.start)}}
		l.hosts[host] = s
	}
	s.used = now
	return s
}

// grantLocked hands free slots to waiters in order, unless the host is
// paused; then a timer grants them when the pause ends. l.mu is held.
func (l *hostLimit) grantLocked(s *hostSem, now time.Time) {
	if s.waiting.len() == 0 {
		return
	}
	if wait := s.adapt.pause.Sub(now); wait > 0 {
		if s.timer == nil {
			s.timer = time.AfterFunc(wait, func() {
				l.mu.Lock()
				s.timer = nil
				l.grantLocked(s, time.Now())
				l.mu.Unlock()
			})
		}
		return
	}
	for s.waiting.len() > 0 && s.inFlight < s.adapt.slots() {
		if !l.roomLocked() {
			l.starveLocked(s)
			return
		}
		l.takeLocked(s, now)
		if wt := s.waiting.pop(); wt.q != nil {
			l.runLined(lineJob{q: wt.q, st: wt.st, slot: hostSlot{l: l, s: s}})
		} else {
			wt.ready <- struct{}{}
		}
	}
}

// runLined runs j on an idle runner, else on a new one.
func (l *hostLimit) runLined(j lineJob) {
	select {
	case l.runners <- j:
		l.reused.Add(1)
	default:
		l.started.Add(1)
		l.live.Add(1)
		go l.runner(j)
	}
}

// runner runs j, then the lined queues it is handed (runLined), until it
// waits runnerIdle for one or the engine stops (stopRunners).
func (l *hostLimit) runner(j lineJob) {
	defer l.live.Add(-1)
	var rq requester // one context for the POSTs of every queue run here
	defer rq.close()
	var idle *time.Timer
	for {
		j.q.work(j.st, j.slot, &rq)
		if idle == nil {
			idle = time.NewTimer(runnerIdle)
		} else {
			idle.Reset(runnerIdle)
		}
		l.idle.Add(1)
		select {
		case j = <-l.runners:
			l.idle.Add(-1)
		case <-idle.C:
			l.idle.Add(-1)
			return
		case <-l.stopped:
			l.idle.Add(-1)
			return
		}
	}
}

// stopRunners ends the idle runners, and those that go idle later.
func (l *hostLimit) stopRunners() { l.stop.Do(func() { close(l.stopped) }) }

// line puts each queue of jobs, woken from its parked state, in its
// host's line, in order: a goroutine runs it (queue.work) with a slot of
// the host once one is free, at once when one is. The fan-out of an append
// lines all of its queues in one pass, under one lock, a host's state
// looked up and its free slots granted once per run of its queues, instead
// of a lock, a lookup and a grant per queue.
func (l *hostLimit) line(jobs ...lineJob) {
	now := time.Now()
	l.mu.Lock()
	var s *hostSem
	for i, j := range jobs {
		if i == 0 || j.q.host != jobs[i-1].q.host {
			if s != nil {
				l.grantLocked(s, now)
			}
			s = l.semLocked(j.q.host, now)
		}
		s.waiting.push(waiter{q: j.q, st: j.st})
	}
	if s != nil {
		l.grantLocked(s, now)
	}
	l.mu.Unlock()
}

// unline takes q out of its host's line and reports whether it was there:
// false when a goroutine was started with a slot for it, or is to be
// (queue.wakeUnlined). q.mu is held, so that q is not lined meanwhile.
func (l *hostLimit) unline(q *queue) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.hosts[q.host]
	if s == nil {
		return false
	}
	n := s.waiting.len()
	s.waiting.remove(waiter{q: q})
	return s.waiting.len() < n
}

// done gives the slot back after a request that ended as a did, having
// taken took at now, and adapts the host's limit to it.
func (h hostSlot) done(a attempt, took time.Duration, now time.Time) {
	l, s := h.l, h.s
	l.mu.Lock()
	l.observeLocked(s, a, took, now)
	l.releaseLocked(s, now)
	l.mu.Unlock()
}

// kept adapts the host's limit to a request as done does, but keeps the
// slot: for the queue's next attempt (takeSlot, reacquire) or, when the
// queue parks caught up, for the next queue in the host's line (handOn),
// which then runs on the queue's goroutine instead of one started for it.
// When a goroutine waits for the host and the queue's turn is over
// (keptTurn), or the host's limit went down below the slots in use, the
// slot is given back at once, as by done, and kept returns none.
func (h hostSlot) kept(a attempt, took time.Duration, now time.Time) hostSlot {
	l, s := h.l, h.s
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observeLocked(s, a, took, now)
	h.reused++
	if (s.waiting.len() > 0 && s.waiting.first().q == nil && h.reused >= keptTurn) || s.inFlight > s.adapt.slots() || !l.keepsLocked(h) {
		l.releaseLocked(s, now)
		return hostSlot{}
	}
	l.grantLocked(s, now) // slots the answer added (a growing limit, a ramp)
	l.feedLocked(now)     // room a growing cap over all hosts added
	return h
}

// observeLocked adapts s's limit to a request; l.mu is held.
func (l *hostLimit) observeLocked(s *hostSem, a attempt, took time.Duration, now time.Time) {
	saturated := s.inFlight >= s.adapt.slots() || s.waiting.len() > 0
	sig := signalOf(a)
	s.adapt.observe(sig, took, a.retryAfter, saturated, now, l.bounds)
	if sig == signalFast {
		l.total.observe(l.probe.latency(now), s.adapt.base(), len(l.starved) > 0, now)
	}
}

// handOn gives h up, its queue parked: to the first in the host's line when
// that is a queue lined without a goroutine (line) and the host's limit
// allows it, returned with its parked state and h for the caller to run
// on its goroutine; else back to the host, as release does, and nil.
func (h hostSlot) handOn() (*queue, *runState, hostSlot) {
	l, s, now := h.l, h.s, time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.waiting.len() > 0 && s.waiting.first().q != nil && s.inFlight <= s.adapt.slots() && !now.Before(s.adapt.pause) && l.keepsLocked(hostSlot{}) && len(l.starved) == 0 {
		wt := s.waiting.pop()
		s.used = now
		l.handed.Add(1)
		l.grantLocked(s, now) // slots the last answer added
		return wt.q, wt.st, hostSlot{l: l, s: s}
	}
	l.giveBackLocked(s, now)
	q, st, slot := l.takeStarvedLocked(now)
	l.feedLocked(now)
	return q, st, slot
}

// release gives the slot back without a request made.
func (h hostSlot) release() {
	h.l.mu.Lock()
	h.l.releaseLocked(h.s, time.Now())
	h.l.mu.Unlock()
}

// takeLocked counts a request in flight to s at now: the first after the
// host was idle may start a ramp (hostAdapt.resume). l.mu is held.
func (l *hostLimit) takeLocked(s *hostSem, now time.Time) {
	if s.inFlight == 0 {
		s.adapt.resume(now, l.bounds.start)
	}
	if l.inFlight == 0 {
		l.total.resume(now)
	}
	s.inFlight++
	l.inFlight++
}

func (l *hostLimit) releaseLocked(s *hostSem, now time.Time) {
	l.giveBackLocked(s, now)
	l.feedLocked(now)
}

// giveBackLocked gives a slot of s back and grants the host's free slots
// to its waiters; l.mu is held.
func (l *hostLimit) giveBackLocked(s *hostSem, now time.Time) {
	s.inFlight--
	l.inFlight--
	if l.inFlight == 0 {
		l.total.rest(now)
	}
	s.used = now
	if s.inFlight == 0 && s.waiting.len() == 0 {
		s.adapt.rest(now)
	}
	if len(l.starved) > 0 { // other hosts wait for the room: s's waiters queue behind them
		if s.waiting.len() > 0 {
			l.starveLocked(s)
		}
		return
	}
	l.grantLocked(s, now)
}

// sweepLocked forgets hosts idle for hostIdleTTL, at most once per TTL.
func (l *hostLimit) sweepLocked(now time.Time) {
	if now.Sub(l.swept) < hostIdleTTL {
		return
	}
	l.swept = now
	for host, s := range l.hosts {
		if s.inFlight == 0 && s.waiting.len() == 0 && s.pacing == 0 && now.Sub(s.used) >= hostIdleTTL && !now.Before(s.adapt.pause) {
			delete(l.hosts, host)
		}
	}
}
