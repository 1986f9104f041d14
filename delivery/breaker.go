package delivery

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerConfig sets when circuits open and for how long. There are two
// kinds (isolate.go): one per callback, which every failed answer of that
// callback counts against (any status but 2xx and 410, and its timeouts),
// so one broken endpoint is held back alone; and one per callback host,
// which only what says the host itself is unreachable or overloaded counts
// against: a connection refused or reset, a TLS or DNS failure, and 429,
// 503 or timeouts once HostEndpoints callbacks of the host gave them.
type BreakerConfig struct {
	// Failures is how many consecutive failures open a host's circuit
	// (default 5; negative disables the host breaker).
	Failures int
	// CoolDown is how long an open host circuit refuses attempts before one
	// probe is let through (default 30s).
	CoolDown time.Duration
	// CallbackFailures is how many consecutive failed attempts open one
	// callback's circuit (default 5; negative disables it).
	CallbackFailures int
	// CallbackCoolDown is how long an open callback circuit refuses its
	// callback's attempts before one probe is let through (default 30s).
	CallbackCoolDown time.Duration
	// HostEndpoints is how many different callbacks of a host must answer
	// 429 or 503, or time out, within CoolDown and with no other answer
	// from the host in between, before these count against the host
	// (default 2; 1: any callback's speaks for its host). A 429 or 503's
	// Retry-After pauses the whole host only then; before, it delays the
	// retries of its own subscription.
	HostEndpoints int
}

// Defaults of BreakerConfig.
const (
	DefaultBreakerFailures      = 5
	DefaultBreakerCoolDown      = 30 * time.Second
	DefaultBreakerHostEndpoints = 2
)

// DefaultBreakerConfig returns the breaker settings used for zero fields:
// a host's or a callback's circuit opens after 5 consecutive failures and
// probes again after 30s; 429, 503 and timeouts of 2 callbacks of a host
// count against the host.
func DefaultBreakerConfig() BreakerConfig {
	return BreakerConfig{Failures: DefaultBreakerFailures, CoolDown: DefaultBreakerCoolDown,
		CallbackFailures: DefaultBreakerFailures, CallbackCoolDown: DefaultBreakerCoolDown,
		HostEndpoints: DefaultBreakerHostEndpoints}
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	d := DefaultBreakerConfig()
	if c.Failures == 0 {
		c.Failures = d.Failures
	}
	if c.CoolDown <= 0 {
		c.CoolDown = d.CoolDown
	}
	if c.CallbackFailures == 0 {
		c.CallbackFailures = d.CallbackFailures
	}
	if c.CallbackCoolDown <= 0 {
		c.CallbackCoolDown = d.CallbackCoolDown
	}
	if c.HostEndpoints <= 0 {
		c.HostEndpoints = d.HostEndpoints
	}
	return c
}

// callback returns the settings of a callback's breaker, as the host
// fields a Breaker reads.
func (c BreakerConfig) callback() BreakerConfig {
	return BreakerConfig{Failures: c.CallbackFailures, CoolDown: c.CallbackCoolDown}
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

// OpenUntil returns, while the circuit is open at now, when its probe may
// go; zero when it is not open.
func (b *Breaker) OpenUntil(now time.Time) time.Time {
	if b.State(now) != BreakerOpen {
		return time.Time{}
	}
	return b.openedAt.Add(b.cfg.CoolDown)
}

func (b *Breaker) open(now time.Time) {
	b.state = BreakerOpen
	b.openedAt = now
	b.probing = false
}

// breakerSet holds one Breaker per key, a callback host or a callback,
// and wakes waiters when a breaker changes state. Closed breakers without
// failures are dropped, so the set holds only keys that are failing.
//
// A set of hosts (endpoints > 0) also weighs pressure (429, 503,
// timeouts): it counts against a host only once endpoints different
// callbacks of the host gave it within the cool-down, with no answer of
// the host's in between (isolate.go).
type breakerSet struct {
	cfg       BreakerConfig // Failures and CoolDown
	endpoints int           // 0: pressure is a failure at once
	// failing is len(keys): while it is 0, as when every host answers,
	// allow and a success's report need not take mu.
	failing atomic.Int64
	mu      sync.Mutex
	keys    map[string]*breakerEntry
	changed chan struct{}
}

// breakerEntry is one key's breaker and, for a host, the pressure not yet
// counted against it.
type breakerEntry struct {
	b *Breaker
	// pending is the pressure of fewer than endpoints different
	// callbacks, in order, within the cool-down; wide is set once
	// endpoints callbacks gave pressure, after which each counts, until
	// the host answers.
	pending []pressureMark
	wide    bool
}

// pressureMark is one attempt's pressure: its callback and time.
type pressureMark struct {
	from string
	at   time.Time
}

// maxPending bounds a host's pending pressure marks.
const maxPending = 64

// newBreakerSet returns the set of host breakers of cfg.
func newBreakerSet(cfg BreakerConfig) *breakerSet {
	cfg = cfg.withDefaults()
	return newBreakerSetOf(cfg, cfg.HostEndpoints)
}

// newCallbackBreakers returns the set of callback breakers of cfg.
func newCallbackBreakers(cfg BreakerConfig) *breakerSet {
	return newBreakerSetOf(cfg.withDefaults().callback(), 0)
}

func newBreakerSetOf(cfg BreakerConfig, endpoints int) *breakerSet {
	return &breakerSet{cfg: BreakerConfig{Failures: cfg.Failures, CoolDown: cfg.CoolDown}, endpoints: endpoints,
		keys: map[string]*breakerEntry{}, changed: make(chan struct{})}
}

// allow asks key's breaker; when refused it returns the time to ask again
// and a channel closed at the next state change of any breaker of the set.
func (s *breakerSet) allow(key string, now time.Time) (ok bool, retry time.Time, changed <-chan struct{}) {
	ok, retry, changed, _ = s.admit(key, now)
	return ok, retry, changed
}

// admit is allow that also says whether an allowed attempt is a probe,
// which must then report an outcome.
func (s *breakerSet) admit(key string, now time.Time) (ok bool, retry time.Time, changed <-chan struct{}, probe bool) {
	if s.failing.Load() == 0 {
		return true, time.Time{}, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[key]
	if e == nil {
		return true, time.Time{}, nil, false
	}
	half := e.b.State(now) == BreakerHalfOpen
	ok, retry = e.b.Allow(now)
	return ok, retry, s.changed, ok && half
}

// outcome is what an attempt reports to a breaker.
type outcome int

const (
	outcomeSuccess outcome = iota
	outcomeFailure
	outcomeAbandon
	// outcomePressure is a 429, 503 or timeout: a failure of a callback;
	// of a host, only as breakerSet.pressure weighs it.
	outcomePressure
)

// report tells key's breaker an attempt's outcome; a pressure outcome
// counts as a failure when the set weighs none (callbacks), else as
// reportFrom weighs it with no callback named.
func (s *breakerSet) report(key string, now time.Time, o outcome) {
	s.reportFrom(key, "", now, o)
}

// reportFrom is report, with the callback from which a pressure outcome
// came; it reports whether the outcome counted as a failure of key.
func (s *breakerSet) reportFrom(key, from string, now time.Time, o outcome) (counted bool) {
	if o == outcomeSuccess && s.failing.Load() == 0 {
		return false // no breaker to tell: a failure makes one under mu first
	}
	if o == outcomeAbandon && s.failing.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.failing.Store(int64(len(s.keys))) }()
	e := s.keys[key]
	if e == nil {
		if o == outcomeSuccess || o == outcomeAbandon {
			return false
		}
		e = &breakerEntry{b: NewBreaker(s.cfg)}
		s.keys[key] = e
	}
	before := e.b.State(now)
	switch o {
	case outcomeSuccess:
		e.b.Success(now)
		delete(s.keys, key)
	case outcomeFailure:
		e.b.Failure(now)
		counted = true
	case outcomePressure:
		counted = s.weighLocked(e, from, now)
		if !counted && e.b.probing {
			e.b.Abandon(now)
		}
	case outcomeAbandon:
		e.b.Abandon(now)
	}
	if e.b.State(now) != before || o == outcomeSuccess || o == outcomeAbandon {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return counted
}

// weighLocked weighs a pressure outcome from callback from against e's
// key and reports whether it counted as a failure; s.mu is held.
func (s *breakerSet) weighLocked(e *breakerEntry, from string, now time.Time) bool {
	if s.endpoints <= 1 || e.wide {
		e.b.Failure(now)
		return true
	}
	keep := e.pending[:0]
	for _, m := range e.pending {
		if now.Sub(m.at) < s.cfg.CoolDown {
			keep = append(keep, m)
		}
	}
	if len(keep) == maxPending {
		keep = append(keep[:0], keep[1:]...)
	}
	e.pending = append(keep, pressureMark{from: from, at: now})
	distinct := map[string]bool{}
	for _, m := range e.pending {
		distinct[m.from] = true
	}
	if len(distinct) < s.endpoints {
		return false
	}
	e.wide = true
	for range e.pending {
		e.b.Failure(now)
	}
	e.pending = nil
	return true
}

// state returns key's breaker state and consecutive failures.
func (s *breakerSet) state(key string, now time.Time) (BreakerState, int) {
	st := s.stats(key, now)
	return st.state, st.failures
}

// breakerView is a key's breaker as it stands.
type breakerView struct {
	state     BreakerState
	failures  int
	openUntil time.Time
}

// stats returns key's breaker as it stands at now.
func (s *breakerSet) stats(key string, now time.Time) breakerView {
	if s.failing.Load() == 0 {
		return breakerView{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[key]
	if e == nil {
		return breakerView{}
	}
	return breakerView{state: e.b.State(now), failures: e.b.fails, openUntil: e.b.OpenUntil(now)}
}

// openUntil returns when key's open circuit lets its probe through, zero
// when it is not open.
func (s *breakerSet) openUntil(key string, now time.Time) time.Time {
	return s.stats(key, now).openUntil
}

// prune drops the breakers of keys not in keep, so hosts or callbacks no
// longer subscribed do not accumulate.
func (s *breakerSet) prune(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.keys {
		if !keep[k] {
			delete(s.keys, k)
		}
	}
	s.failing.Store(int64(len(s.keys)))
}
