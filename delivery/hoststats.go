package delivery

import (
	"slices"
	"strings"
	"time"
)

// inUse returns the requests in flight to host.
func (l *hostLimit) inUse(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.hosts[host]; s != nil {
		return s.inFlight
	}
	return 0
}

// HostStats is the concurrency of one callback host as its adaptive limit
// stands (hostadapt.go).
type HostStats struct {
	Host     string `json:"host"`
	Limit    int    `json:"limit"`    // its adaptive limit (a burst after idle ramps up to it)
	InFlight int    `json:"inFlight"` // requests in flight
	Waiting  int    `json:"waiting"`  // deliveries waiting for a slot
	// BaselineMS is the host's fastest answer time of the last 5 to 10 s,
	// in milliseconds: what an answer takes when nothing waits.
	BaselineMS float64 `json:"baselineMs"`
	// SmoothedMS is its answer time smoothed over about the last 8
	// answers, in milliseconds: beyond three times the baseline and a
	// millisecond, its limit stops growing (hostadapt.go).
	SmoothedMS float64 `json:"smoothedMs"`
	// PausedUntil is when a Retry-After pause ends, when one is running.
	PausedUntil time.Time `json:"pausedUntil,omitzero"`
	// Rate is the deliveries a second the host is held to
	// (Config.PerHostRate), 0 for none; RateWaiting counts the deliveries
	// waiting for it or for the end of a Retry-After pause, before they
	// wait for a slot (Waiting).
	Rate        float64 `json:"rate"`
	RateWaiting int     `json:"rateWaiting"`
	// Breaker is the host's circuit breaker, which only what says the
	// host is unreachable or overloaded counts against (isolate.go).
	Breaker BreakerStats `json:"breaker"`
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// hosts returns the stats of every host delivered to recently, by host.
func (l *hostLimit) stats() []HostStats {
	now := time.Now()
	l.mu.Lock()
	out := make([]HostStats, 0, len(l.hosts))
	for host, s := range l.hosts {
		st := HostStats{Host: host, Limit: int(s.adapt.limit), InFlight: s.inFlight, Waiting: s.waiting.len(),
			BaselineMS: ms(s.adapt.base()), SmoothedMS: ms(s.adapt.srtt), Rate: l.perSecond, RateWaiting: s.pacing}
		if now.Before(s.adapt.pause) {
			st.PausedUntil = s.adapt.pause
		}
		out = append(out, st)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b HostStats) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// Hosts returns the concurrency and the circuit breaker of every callback
// host this engine delivered to in the last minute, ordered by host.
func (w *Webhooks) Hosts() []HostStats {
	hs := w.limit.stats()
	now := w.cfg.Clock()
	for i := range hs {
		hs[i].Breaker = breakerStats(w.breakers, hs[i].Host, now)
	}
	return hs
}
