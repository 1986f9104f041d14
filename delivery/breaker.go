package delivery

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerConfig sets when a callback host's circuit opens and for how long.
type BreakerConfig struct {
	// Failures is how many consecutive failed attempts to a host open its
	// circuit (default 5; negative disables the breaker).
	Failures int
	// CoolDown is how long an open circuit refuses attempts before one
	// probe is let through (default 30s).
	CoolDown time.Duration
}

// DefaultBreakerConfig returns the breaker settings used for zero fields:
// open after 5 consecutive failures, probe again after 30s.
func DefaultBreakerConfig() BreakerConfig {
	return BreakerConfig{Failures: 5, CoolDown: 30 * time.Second}
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	d := DefaultBreakerConfig()
	if c.Failures == 0 {
		c.Failures = d.Failures
	}
	if c.CoolDown <= 0 {
		c.CoolDown = d.CoolDown
	}
	return c
}

// BreakerState is the state of a circuit breaker.
type BreakerState int

// Breaker states.
const (
	// BreakerClosed lets every attempt through.
	BreakerClosed BreakerState = iota
	// BreakerOpen refuses attempts until the cool-down has passed.
	BreakerOpen
	// BreakerHalfOpen lets one probe through; its outcome closes or
	// reopens the circuit.
	BreakerHalfOpen
)

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "closed"
}

// Breaker is a circuit breaker for one host: a pure state machine whose
// clock is the now argument of each method. It is not safe for concurrent
// use; breakerSet guards it.
//
// Closed → Open after Failures consecutive failures; Open → HalfOpen once
// CoolDown has passed; HalfOpen lets one probe through, and its success
// closes the circuit while its failure opens it again.
type Breaker struct {
	cfg      BreakerConfig
	state    BreakerState
	fails    int
	openedAt time.Time
	probing  bool
}

// NewBreaker returns a closed breaker; zero fields of cfg take defaults.
func NewBreaker(cfg BreakerConfig) *Breaker {
	return &Breaker{cfg: cfg.withDefaults()}
}

// State returns the state at now, moving Open to HalfOpen when the
// cool-down has passed.
func (b *Breaker) State(now time.Time) BreakerState {
	if b.state == BreakerOpen && !now.Before(b.openedAt.Add(b.cfg.CoolDown)) {
		b.state = BreakerHalfOpen
		b.probing = false
	}
	return b.state
}

// Allow reports whether an attempt may start at now. When it may not, it
// returns the earliest time worth asking again: the end of the cool-down,
// or, while a probe is out, one cool-down later (callers are also woken by
// the breaker set when the probe ends). A true answer in HalfOpen makes the
// caller the probe: it must report Success, Failure or Abandon.
func (b *Breaker) Allow(now time.Time) (bool, time.Time) {
	if b.cfg.Failures < 0 {
		return true, time.Time{}
	}
	switch b.State(now) {
	case BreakerOpen:
		return false, b.openedAt.Add(b.cfg.CoolDown)
	case BreakerHalfOpen:
		if b.probing {
			return false, now.Add(b.cfg.CoolDown)
		}
		b.probing = true
	}
	return true, time.Time{}
}

// Success records a successful attempt: the circuit closes.
func (b *Breaker) Success(time.Time) {
	b.state = BreakerClosed
	b.fails = 0
	b.probing = false
}

// Failure records a failed attempt at now: a failed probe reopens the
// circuit, and the Failures-th consecutive failure opens a closed one.
func (b *Breaker) Failure(now time.Time) {
	if b.cfg.Failures < 0 {
		return
	}
	b.fails++
	switch b.State(now) {
	case BreakerHalfOpen:
		b.open(now)
	case BreakerClosed:
		if b.fails >= b.cfg.Failures {
			b.open(now)
		}
	}
}

// Abandon records that an allowed attempt ended without an outcome (the
// hub is stopping): a probe slot is freed, nothing else changes.
func (b *Breaker) Abandon(time.Time) {
	b.probing = false
}

// ConsecutiveFailures returns the failures counted since the last success.
func (b *Breaker) ConsecutiveFailures() int { return b.fails }

func (b *Breaker) open(now time.Time) {
	b.state = BreakerOpen
	b.openedAt = now
	b.probing = false
}

// breakerSet holds one Breaker per callback host and wakes waiters when a
// breaker changes state. Closed breakers without failures are dropped, so
// the set holds only hosts that are failing.
type breakerSet struct {
	cfg BreakerConfig
	// failing is len(hosts): while it is 0, as when every host answers,
	// allow and a success's report need not take mu.
	failing atomic.Int64
	mu      sync.Mutex
	hosts   map[string]*Breaker
	changed chan struct{}
}

func newBreakerSet(cfg BreakerConfig) *breakerSet {
	return &breakerSet{cfg: cfg.withDefaults(), hosts: map[string]*Breaker{}, changed: make(chan struct{})}
}

// allow asks host's breaker; when refused it returns the time to ask again
// and a channel closed at the next state change of any breaker.
func (s *breakerSet) allow(host string, now time.Time) (bool, time.Time, <-chan struct{}) {
	if s.failing.Load() == 0 {
		return true, time.Time{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.hosts[host]
	if b == nil {
		return true, time.Time{}, nil
	}
	ok, retry := b.Allow(now)
	return ok, retry, s.changed
}

// outcome is what an attempt reports to its host's breaker.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeAbandon
)

func (s *breakerSet) report(host string, now time.Time, o outcome) {
	if o != outcomeFailure && s.failing.Load() == 0 {
		return // no breaker to tell: a failure makes one under mu first
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.failing.Store(int64(len(s.hosts))) }()
	b := s.hosts[host]
	if b == nil {
		if o != outcomeFailure {
			return
		}
		b = NewBreaker(s.cfg)
		s.hosts[host] = b
	}
	before := b.State(now)
	switch o {
	case outcomeSuccess:
		b.Success(now)
		delete(s.hosts, host)
	case outcomeFailure:
		b.Failure(now)
	case outcomeAbandon:
		b.Abandon(now)
	}
	if b.State(now) != before || o != outcomeFailure {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// state returns host's breaker state and consecutive failures.
func (s *breakerSet) state(host string, now time.Time) (BreakerState, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.hosts[host]
	if b == nil {
		return BreakerClosed, 0
	}
	return b.State(now), b.fails
}

// prune drops the breakers of hosts not in keep, so hosts no longer
// subscribed do not accumulate.
func (s *breakerSet) prune(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h := range s.hosts {
		if !keep[h] {
			delete(s.hosts, h)
		}
	}
	s.failing.Store(int64(len(s.hosts)))
}
