package delivery

import (
	"math"
	"runtime"
	"runtime/metrics"
	"time"
)

// The cap on requests in flight over all callback hosts: the pure
// arithmetic of it, and the probe of the hub's own scheduling delay it
// follows. hostlimit.go applies it.
//
// Each host's limit (hostadapt.go) keeps that host's queue short; it
// cannot see that a thousand hosts with one request each make a thousand
// goroutines ready at once on a hub of two cores, where the first answer
// then waits until every request is written, and each costs more CPU than
// it would a few dozen at a time. The cap starts at totalPerCore requests
// per core and grows only while it is what holds deliveries back (a host
// waits for room under it) and the hub's goroutines get a core quickly:
// the Go runtime's scheduling latency (how long a ready goroutine waits
// for a core), measured over the last totalProbeEvery, within
// schedQuick. Beyond schedQuick it holds; beyond schedSlow it is cut by a
// quarter, not below its start. So distant hosts, whose answers take long
// while the hub's cores idle, let it grow as far as they need, and loopback
// or nearby ones, which keep the hub's cores busy, hold it near where a
// plain sender with a few dozen workers runs best. After the hub was idle
// (no request in flight) for restartIdle, a burst starts again from the
// start, as a host's does. The answers of a host whose fastest answer
// takes more than rttPerLag scheduling latencies count as quick whatever
// the latency: they wait on the network, not on the hub's cores.
//
// A host with waiters and free slots of its own but no room under the cap
// waits in line for it with the other such hosts (hostLimit.starved): room
// given back goes to the first of them, before the next waiter of the host
// that gave it back, who queues behind them, so hosts take turns.

// totalPerCore is the requests in flight over all hosts per core (GOMAXPROCS)
// the cap starts at.
const totalPerCore = 16

// totalCeiling bounds the cap.
const totalCeiling = 1 << 16

// Scheduling latencies: within schedQuick the hub has cores to spare,
// beyond schedSlow its ready goroutines queue for them.
const (
	schedQuick = 250 * time.Microsecond
	schedSlow  = time.Millisecond
)

// rttPerLag is how many scheduling latencies a host's fastest answer
// takes at most for the latency to count against its answers
// (totalAdapt.observe): a request to a loopback host, which waits for a
// core at each of its goroutines' turns (the queue's, the transport's
// writer and reader, the server's), takes about four or five.
const rttPerLag = 8

// totalProbeEvery is how often the scheduling latency is read while
// requests are in flight.
const totalProbeEvery = 10 * time.Millisecond

// roomLocked reports whether the cap over all hosts allows one more
// request; l.mu is held.
func (l *hostLimit) roomLocked() bool { return l.inFlight < l.total.slots() }

// keepsLocked reports whether the cap over all hosts lets a queue keep h
// for its next attempt: not when the cap went down below the requests in
// flight, nor once the queue's turn is over (keptTurn) while other hosts
// wait for room under it, who would otherwise wait as long as the queues
// holding the room have a backlog. l.mu is held.
func (l *hostLimit) keepsLocked(h hostSlot) bool {
	return l.inFlight <= l.total.slots() && (len(l.starved) == 0 || h.reused < keptTurn)
}

// starveLocked puts s, a host with waiters, in line for room under the
// cap over all hosts, unless it is; l.mu is held.
func (l *hostLimit) starveLocked(s *hostSem) {
	if !s.starved {
		s.starved = true
		l.starved = append(l.starved, s)
	}
}

// feedLocked grants the room under the cap over all hosts to the hosts
// that wait for it, in order; l.mu is held.
func (l *hostLimit) feedLocked(now time.Time) {
	for len(l.starved) > 0 && l.roomLocked() {
		l.grantLocked(l.popStarvedLocked(), now)
	}
}

// popStarvedLocked removes the first host waiting for room under the cap
// over all hosts and returns it; l.starved is not empty, l.mu is held.
func (l *hostLimit) popStarvedLocked() *hostSem {
	s := l.starved[0]
	l.starved[0] = nil
	l.starved = l.starved[1:]
	if len(l.starved) == 0 {
		l.starved = l.starved[:0:0]
	}
	s.starved = false
	return s
}

// takeStarvedLocked takes the room a slot given back left under the cap
// over all hosts for the first host waiting for it (starved), when its
// first waiter is a lined queue its limit lets run: that queue is
// returned, with its parked state and slot, to run on the caller's
// goroutine instead of one woken for it. l.mu is held.
func (l *hostLimit) takeStarvedLocked(now time.Time) (*queue, *runState, hostSlot) {
	if len(l.starved) == 0 || !l.roomLocked() {
		return nil, nil, hostSlot{}
	}
	s := l.starved[0]
	if s.waiting.len() == 0 || s.waiting.first().q == nil || s.inFlight >= s.adapt.slots() || now.Before(s.adapt.pause) {
		return nil, nil, hostSlot{}
	}
	l.takeLocked(s, now)
	wt := s.waiting.pop()
	if s.waiting.len() == 0 {
		l.popStarvedLocked()
	}
	l.handed.Add(1)
	return wt.q, wt.st, hostSlot{l: l, s: s}
}

// totalAdapt is the cap over all hosts; its methods are pure over its
// fields and the values passed.
type totalAdapt struct {
	start     float64
	limit     float64
	backedOff bool
	lastCut   time.Time
	idleAt    time.Time // when the last request in flight ended; zero while one is
}

func newTotalAdapt(procs int) totalAdapt {
	start := float64(totalPerCore * max(procs, 1))
	return totalAdapt{start: start, limit: start}
}

// slots is how many requests may be in flight over all hosts.
func (t *totalAdapt) slots() int { return int(t.limit) }

// observe adapts the cap after an answer at now from a host whose
// fastest answer of late took base: lag is the hub's recent scheduling
// latency (0 when unknown), saturated whether a host waits for room under
// the cap. A host whose fastest answer takes more than rttPerLag
// scheduling latencies is distant: its answers wait mostly on the
// network, not on the hub's cores, and count as quick whatever the
// latency, so that a hub whose cores are busy for other reasons (a
// collection, other processes) still lets the requests to distant hosts
// grow. (Not the answer's own time: on a loopback host that grows with
// the requests in flight, each waiting behind the others for a core.)
func (t *totalAdapt) observe(lag, base time.Duration, saturated bool, now time.Time) {
	if base > rttPerLag*lag {
		lag = 0
	}
	switch {
	case lag > schedSlow:
		if now.Sub(t.lastCut) >= totalProbeEvery {
			t.limit = max(t.limit*0.75, t.start)
			t.lastCut = now
		}
		t.backedOff = true
	case lag > schedQuick:
		t.backedOff = true
	case !saturated:
	case t.backedOff:
		t.limit += 1 / t.limit
	default:
		t.limit++
	}
	t.limit = min(t.limit, totalCeiling)
}

// resume notes the first request in flight at now: after restartIdle idle,
// the cap starts from its start again, and slow start with it.
func (t *totalAdapt) resume(now time.Time) {
	if !t.idleAt.IsZero() && now.Sub(t.idleAt) >= restartIdle && t.limit > t.start {
		t.limit, t.backedOff = t.start, false
	}
	t.idleAt = time.Time{}
}

// rest notes that the last request in flight ended at now.
func (t *totalAdapt) rest(now time.Time) { t.idleAt = now }

// schedProbe reads the Go runtime's scheduling latency histogram and
// gives the 90th percentile of the latencies since its last read.
type schedProbe struct {
	sample []metrics.Sample
	last   []uint64 // the histogram's counts at the last read
	at     time.Time
	lag    time.Duration
}

const schedMetric = "/sched/latencies:seconds"

func newSchedProbe() *schedProbe {
	return &schedProbe{sample: []metrics.Sample{{Name: schedMetric}}}
}

// latency returns the scheduling latency's 90th percentile over the
// reads of the last totalProbeEvery or so, reading again when the last
// read is older than that.
func (p *schedProbe) latency(now time.Time) time.Duration {
	if now.Sub(p.at) < totalProbeEvery {
		return p.lag
	}
	p.at = now
	metrics.Read(p.sample)
	if p.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := p.sample[0].Value.Float64Histogram()
	if len(p.last) != len(h.Counts) {
		p.last = make([]uint64, len(h.Counts))
		copy(p.last, h.Counts)
		return p.lag
	}
	var n uint64
	for i, c := range h.Counts {
		n += c - p.last[i]
	}
	if n == 0 {
		copy(p.last, h.Counts)
		p.lag = 0
		return 0
	}
	want, seen := n-n/10, uint64(0)
	for i, c := range h.Counts {
		seen += c - p.last[i]
		if seen >= want {
			b := h.Buckets[i+1]
			if math.IsInf(b, 1) {
				b = h.Buckets[i]
			}
			p.lag = time.Duration(b * float64(time.Second))
			break
		}
	}
	copy(p.last, h.Counts)
	return p.lag
}

// procs is the cores the hub's goroutines run on.
func procs() int { return runtime.GOMAXPROCS(0) }
