package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Isolation by endpoint: what one attempt counts against, its callback's
// circuit or its host's (breaker.go), so that one broken endpoint of a
// host shared by many (one SaaS domain, one ingress) never holds back the
// others.
//
//   - Any answer but 2xx and 410, and a timeout, counts against the
//     callback that gave it.
//   - A connection refused or reset, a TLS or DNS failure say the host
//     cannot be reached: they count against the host.
//   - A 429, a 503 or a timeout may be one endpoint's or the host's: they
//     count against the host once several of its callbacks gave them
//     (BreakerConfig.HostEndpoints); so does a Retry-After's pause of the
//     host. Before, the Retry-After delays its own subscription's retry.
//   - Any other answer says the host is up: a success of the host's.

// verdict is what one attempt counts for its callback's breaker and its
// host's.
type verdict struct{ callback, host outcome }

// judge classifies an attempt for the breakers (see above).
func judge(a attempt) verdict {
	switch {
	case a.abandoned, a.permanent:
		return verdict{outcomeAbandon, outcomeAbandon}
	case a.ok(), a.gone():
		return verdict{outcomeSuccess, outcomeSuccess}
	case a.err != nil && timedOut(a.err):
		return verdict{outcomeFailure, outcomePressure}
	case a.err != nil:
		return verdict{outcomeAbandon, outcomeFailure}
	case a.status == http.StatusTooManyRequests, a.status == http.StatusServiceUnavailable:
		return verdict{outcomeFailure, outcomePressure}
	}
	return verdict{outcomeFailure, outcomeSuccess}
}

// timedOut reports whether err says a request ran out of time.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// timeoutError is the error of an attempt that got no answer in time.
type timeoutError struct{ after time.Duration }

func (e timeoutError) Error() string {
	return "timed out after " + strconv.FormatFloat(e.after.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// Timeout reports true: it is a net.Error that timed out.
func (timeoutError) Timeout() bool { return true }

// Temporary reports true, as net.Error asks.
func (timeoutError) Temporary() bool { return true }

// Is matches context.DeadlineExceeded.
func (timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// admit asks the breakers of callback and of its host whether an attempt
// may start at now. When not, it returns the time worth asking again, the
// channel that says a breaker changed, and which circuit is open (for a
// dead letter's reason).
func (w *Webhooks) admit(host, callback string, now time.Time) (ok bool, retry time.Time, changed <-chan struct{}, open string) {
	ok, retry, changed, probe := w.callbacks.admit(callback, now)
	if !ok {
		return false, retry, changed, "callback " + callback
	}
	if ok, retry, changed = w.breakers.allow(host, now); !ok {
		if probe { // the callback's probe is not made after all
			w.callbacks.report(callback, now, outcomeAbandon)
		}
		return false, retry, changed, "host " + host
	}
	return true, time.Time{}, nil, ""
}

// unadmit undoes admit for an attempt not made after all: a probe's slot
// is freed.
func (w *Webhooks) unadmit(host, callback string, now time.Time) {
	w.callbacks.report(callback, now, outcomeAbandon)
	w.breakers.report(host, now, outcomeAbandon)
}

// settle reports attempt a to callback's breaker and host's, and returns
// a as the host's limit is to see it: a 429, 503 or timeout whose pressure
// did not count against the host neither pauses it (Retry-After) nor cuts
// its concurrency (hostadapt.go).
func (w *Webhooks) settle(host, callback string, a attempt, now time.Time) attempt {
	v := judge(a)
	w.callbacks.report(callback, now, v.callback)
	if !w.breakers.reportFrom(host, callback, now, v.host) && v.host == outcomePressure {
		a.retryAfter, a.ownPressure = 0, true
	}
	return a
}

// heldUntil is when an attempt of callback, of host, may be made at the
// earliest after at as the breakers stand at now: at, or the end of an
// open circuit's cool-down; held tells which circuit holds it, "" for none.
func (w *Webhooks) heldUntil(host, callback string, at, now time.Time) (time.Time, string) {
	held := ""
	if t := w.callbacks.openUntil(callback, now); t.After(at) {
		at, held = t, "callback "+callback
	}
	if t := w.breakers.openUntil(host, now); t.After(at) {
		at, held = t, "host "+host
	}
	return at, held
}

// circuitError is the reason of a notification given up because the
// circuit named open (the callback's or the host's) stayed open, after
// attempts attempts, the last being last.
func circuitError(open string, attempts int, last attempt) error {
	if attempts == 0 {
		return fmt.Errorf("delivery: %w for %s", errCircuitOpen, open)
	}
	return fmt.Errorf("delivery: %w for %s after %d attempts; last: %s", errCircuitOpen, open, attempts, last.reason())
}

// BreakerStats is a circuit breaker as it stands, of a callback host or
// of one callback.
type BreakerStats struct {
	State string `json:"state"` // closed, open or half-open
	// ConsecutiveFailures is the failures counted since its last success;
	// Failures of them open it (the setting).
	ConsecutiveFailures int `json:"consecutiveFailures"`
	Failures            int `json:"failures"`
	// CoolDownSeconds is how long it stays open before a probe (the
	// setting); OpenUntil is when that probe may go, while it is open.
	CoolDownSeconds float64   `json:"coolDownSeconds"`
	OpenUntil       time.Time `json:"openUntil,omitzero"`
}

// MarshalJSON writes b, its zero value as a closed breaker.
func (b BreakerStats) MarshalJSON() ([]byte, error) {
	type plain BreakerStats
	if b.State == "" {
		b.State = BreakerClosed.String()
	}
	return json.Marshal(plain(b))
}

// breakerStats is key's breaker in s as it stands at now.
func breakerStats(s *breakerSet, key string, now time.Time) BreakerStats {
	v := s.stats(key, now)
	return BreakerStats{State: v.state.String(), ConsecutiveFailures: v.failures, Failures: s.cfg.Failures,
		CoolDownSeconds: s.cfg.CoolDown.Seconds(), OpenUntil: v.openUntil}
}
