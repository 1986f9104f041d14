package delivery

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Adaptive per-host concurrency: the pure arithmetic of how many requests
// one callback host gets at once. hostlimit.go applies it.
//
// The limit grows while the host answers quickly and the limit is what
// holds delivery back (every slot taken): by one per answer until the
// first back-off (so it doubles per round trip), then by about one per
// round trip. It halves, at most once per round trip, when the host
// answers 429 or 503, times out, or its answers, smoothed over the last
// several, come far slower than its fastest recent answers (one slow
// answer among fast ones is the hub's own scheduling on a busy machine
// more often than the host); a 429 or 503 with Retry-After also pauses the host until
// then (at most MaxRetryAfter). It stays between the floor and the ceiling
// (Config.PerHostMin, PerHostMax).

// Defaults of the per-host concurrency bounds.
const (
	DefaultPerHostMin = 1
	DefaultPerHostMax = 64
)

// MaxRetryAfter bounds how long a callback host's Retry-After pauses it.
const MaxRetryAfter = 10 * time.Minute

// slowMargin is how much slower than the host's baseline an answer must
// be, beyond four times the baseline, to count as the host slowing down:
// on a loaded hub, the hub's own scheduling adds milliseconds that say
// nothing about the host.
const slowMargin = 100 * time.Millisecond

// signal is what one attempt says about its host's capacity.
type signal int

const (
	signalNone     signal = iota // says nothing: abandoned, refused, a 4xx of one callback
	signalFast                   // answered within the host's usual time
	signalPressure               // 429, 503, a timeout or a slow answer: back off
)

// hostAdapt is one host's adaptive limit; its methods are pure over its
// fields and the values passed.
type hostAdapt struct {
	limit     float64       // in [floor, ceiling]; floor(limit) slots
	base      time.Duration // the host's usual answer time: the fastest, drifting up slowly
	srtt      time.Duration // its answer time smoothed over about the last 8 answers
	lastCut   time.Time
	backedOff bool      // slow start is over
	pause     time.Time // no new request before it (Retry-After)
}

// observe updates a after an attempt that took rtt and said sig at now;
// saturated tells whether every slot was taken (or someone waited), so
// that the limit grows only when it is what holds delivery back.
// retryAfter > 0 pauses the host until now+retryAfter.
func (a *hostAdapt) observe(sig signal, rtt time.Duration, retryAfter time.Duration, saturated bool, now time.Time, floor, ceiling int) {
	if rtt > 0 && sig == signalFast {
		if a.srtt == 0 {
			a.srtt = rtt
		} else {
			a.srtt += (rtt - a.srtt) / 8
		}
		if a.slow(a.srtt) {
			sig = signalPressure
		}
	}
	if rtt > 0 && sig != signalNone {
		switch {
		case a.base == 0 || rtt < a.base:
			a.base = rtt
		default:
			a.base += (rtt - a.base) / 64
		}
	}
	switch sig {
	case signalFast:
		if !saturated {
			break
		}
		if a.backedOff {
			a.limit += 1 / a.limit
		} else {
			a.limit++
		}
	case signalPressure:
		if now.Sub(a.lastCut) >= max(rtt, 10*time.Millisecond) {
			a.limit /= 2
			a.lastCut = now
		}
		a.backedOff = true
	}
	a.limit = min(max(a.limit, float64(floor)), float64(ceiling))
	if retryAfter > 0 {
		if until := now.Add(min(retryAfter, MaxRetryAfter)); until.After(a.pause) {
			a.pause = until
		}
	}
}

// slow reports whether rtt is far beyond the host's baseline.
func (a *hostAdapt) slow(rtt time.Duration) bool {
	return a.base > 0 && rtt > 4*a.base && rtt > a.base+slowMargin
}

// slots is how many requests the host may have in flight.
func (a *hostAdapt) slots() int { return int(a.limit) }

// signalOf classifies an attempt for its host's limit.
func signalOf(a attempt) signal {
	switch {
	case a.abandoned:
		return signalNone
	case a.err != nil:
		var ne net.Error
		if errors.Is(a.err, context.DeadlineExceeded) || (errors.As(a.err, &ne) && ne.Timeout()) {
			return signalPressure
		}
		return signalNone
	case a.status == http.StatusTooManyRequests, a.status == http.StatusServiceUnavailable:
		return signalPressure
	}
	return signalFast
}
