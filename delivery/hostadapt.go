package delivery

import (
	"net/http"
	"time"
)

// Adaptive per-host concurrency: the pure arithmetic of how many requests
// one callback host gets at once. hostlimit.go applies it.
//
// How quickly a host answers is judged by its answer time smoothed over
// about the last 8 answers (srtt) against its fastest answer of the last
// 5 to 10 s (base), the time an answer takes when nothing waits (not a
// 429 or 503, which a rate limiter in front of a host may answer at once
// without doing the work: taken as the base, it would make every ordinary
// answer after it look queued and hold the limit down for 5 to 10 s):
//
//   - srtt within three times the base plus queueSlack: the host answers
//     quickly (a distant host's answers vary by that much without a queue).
//     The limit grows while it is what holds delivery back (every slot
//     taken): by one per answer until the first back-off (so it doubles
//     per round trip), then by about one per round trip.
//   - beyond that, answers wait in a queue, the host's or the hub's own (on
//     a hub whose cores are all busy, more requests at once only lengthen
//     its run queue and each request's wait for a core): the limit holds,
//     and slow start ends.
//   - beyond six times the base plus four queueSlack, the queue keeps
//     growing: the limit is cut by a quarter, at most once per round trip,
//     but not below where the host started (Config.PerHost): answer times
//     also grow with the hub's own load, which fewer requests to one host
//     need not relieve.
//
// A host idle for longer than restartIdle and two of its round trips
// starts its next burst at its start limit (Config.PerHost) if its limit
// is above, and ramps back up to the limit by one per answer (doubling per
// round trip): a burst to a host whose limit is 64 would otherwise make
// 64 requests ready at once, and the first answer wait for a core until
// every one is written; a few round trips of ramp cost a burst less than
// that wait.
//
// It halves, at most once per round trip, when the host answers 429 or
// 503 or times out, down to the floor; a 429 or 503 with Retry-After also
// pauses the host until then (at most MaxRetryAfter). It stays between the
// floor and the ceiling (Config.PerHostMin, PerHostMax).

// Defaults of the per-host concurrency bounds.
const (
	DefaultPerHostMin = 1
	DefaultPerHostMax = 64
)

// MaxRetryAfter bounds how long a callback host's Retry-After pauses it.
const MaxRetryAfter = 10 * time.Minute

// queueSlack is the wait beyond three times a host's base answer time that still
// counts as answering quickly: a hub delivering to a loopback or nearby
// host answers in a fraction of a millisecond when idle, and the
// milliseconds its own goroutines wait for a core when busy are what the
// limit is to keep short.
const queueSlack = time.Millisecond

// restartIdle is the least idle time after which a host ramps up again
// from its start (hostAdapt.resume).
const restartIdle = time.Millisecond

// baseWindow is how long the fastest answer stays a host's base: a host
// that became slower for good gets a slower base after one to two windows.
const baseWindow = 5 * time.Second

// signal is what one attempt says about its host's capacity.
type signal int

const (
	signalNone     signal = iota // says nothing: abandoned, refused, or a 429, 503 or timeout of one callback alone (isolate.go)
	signalFast                   // answered, within the host's usual time or not
	signalPressure               // 429, 503 or a timeout: back off
)

// bounds are the limits a host's limit moves within: floor and ceiling,
// and start, where a host starts and below which only pressure takes it.
type bounds struct{ floor, start, ceiling int }

// hostAdapt is one host's adaptive limit; its methods are pure over its
// fields and the values passed.
type hostAdapt struct {
	limit float64       // in [floor, ceiling]; floor(limit) slots
	srtt  time.Duration // answer time smoothed over about the last 8 answers
	// minNow is the fastest answer since window began, minLast the
	// fastest of the window before (base).
	minNow, minLast time.Duration
	window          time.Time
	lastCut         time.Time
	backedOff       bool      // slow start is over
	pause           time.Time // no new request before it (Retry-After)
	// idleAt is when the host's last request ended with none waiting,
	// zero while it has one in flight; ramp > 0 is the slots of a burst
	// ramping up after idle (resume), below limit.
	idleAt time.Time
	ramp   float64
}

// observe updates a after an attempt that took rtt and said sig at now;
// saturated tells whether every slot was taken (or someone waited), so
// that the limit grows only when it is what holds delivery back.
// retryAfter > 0 pauses the host until now+retryAfter.
func (a *hostAdapt) observe(sig signal, rtt time.Duration, retryAfter time.Duration, saturated bool, now time.Time, b bounds) {
	if rtt > 0 && sig == signalFast {
		a.noteAnswer(rtt, now)
	}
	switch sig {
	case signalFast:
		if rtt > 0 {
			if a.srtt == 0 {
				a.srtt = rtt
			} else {
				a.srtt += (rtt - a.srtt) / 8
			}
		}
		switch {
		case a.ramp > 0:
			if a.ramp++; a.ramp >= a.limit {
				a.ramp = 0
			}
			if a.queueing() {
				a.backedOff = true
			}
		case a.congested():
			if a.limit > float64(b.start) {
				a.cut(0.75, rtt, now)
				a.limit = max(a.limit, float64(b.start))
			}
			a.backedOff = true
		case a.queueing():
			a.backedOff = true
		case !saturated:
		case a.backedOff:
			a.limit += 1 / a.limit
		default:
			a.limit++
		}
	case signalPressure:
		a.cut(0.5, rtt, now)
	}
	a.limit = min(max(a.limit, float64(b.floor)), float64(b.ceiling))
	if retryAfter > 0 {
		if until := now.Add(min(retryAfter, MaxRetryAfter)); until.After(a.pause) {
			a.pause = until
		}
	}
}

// cut multiplies the limit by by, unless it was cut less than a round
// trip (rtt, at least 10 ms) ago; slow start is over.
func (a *hostAdapt) cut(by float64, rtt time.Duration, now time.Time) {
	if now.Sub(a.lastCut) >= max(rtt, 10*time.Millisecond) {
		a.limit *= by
		a.lastCut = now
	}
	a.backedOff = true
}

// noteAnswer keeps the fastest answer time of the current and the last
// baseWindow.
func (a *hostAdapt) noteAnswer(rtt time.Duration, now time.Time) {
	if since := now.Sub(a.window); since >= baseWindow {
		a.minLast, a.minNow, a.window = a.minNow, 0, now
		if since >= 2*baseWindow {
			a.minLast = 0 // idle for a window: nothing recent to keep
		}
	}
	if a.minNow == 0 || rtt < a.minNow {
		a.minNow = rtt
	}
}

// base is the host's fastest answer time of the last one to two
// baseWindows, 0 before any answer.
func (a *hostAdapt) base() time.Duration {
	if a.minLast == 0 || (a.minNow > 0 && a.minNow < a.minLast) {
		return a.minNow
	}
	return a.minLast
}

// queueing reports whether the smoothed answer time is beyond what a
// host answering without a queue takes.
func (a *hostAdapt) queueing() bool {
	b := a.base()
	return b > 0 && a.srtt > 3*b+queueSlack
}

// congested reports whether the smoothed answer time is far beyond it.
func (a *hostAdapt) congested() bool {
	b := a.base()
	return b > 0 && a.srtt > 6*b+4*queueSlack
}

// slots is how many requests the host may have in flight.
func (a *hostAdapt) slots() int {
	if a.ramp > 0 {
		return int(min(a.ramp, a.limit))
	}
	return int(a.limit)
}

// resume notes a request to the host at now, the first in flight: after
// an idle time of restartIdle and two round trips, a limit above start
// ramps up from start again.
func (a *hostAdapt) resume(now time.Time, start int) {
	if !a.idleAt.IsZero() && now.Sub(a.idleAt) >= max(restartIdle, 2*a.srtt) && a.limit > float64(start) {
		a.ramp = float64(start)
	}
	a.idleAt = time.Time{}
}

// rest notes that the host's last request in flight ended at now with
// none waiting.
func (a *hostAdapt) rest(now time.Time) { a.idleAt = now }

// signalOf classifies an attempt for its host's limit.
func signalOf(a attempt) signal {
	switch {
	case a.abandoned, a.ownPressure:
		return signalNone
	case a.err != nil:
		if timedOut(a.err) {
			return signalPressure
		}
		return signalNone
	case a.status == http.StatusTooManyRequests, a.status == http.StatusServiceUnavailable:
		return signalPressure
	}
	return signalFast
}
