package delivery

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/rshub/rshub/hub"
)

// Rate limits: deliveries per second per subscription and per callback
// host, token buckets of one token (golang.org/x/time/rate), so attempts
// are spaced evenly. A queue takes its subscription's token, then waits
// out its host's Retry-After pause and takes the host's token, and only
// then asks for a slot of the host's concurrency limit (hostlimit.go): it
// never holds a slot while it waits, and each wait stops only its own
// queue, so a throttled destination slows no other. Every attempt takes
// tokens, retries included; the queue still delivers one at a time, in
// order.

// subRate is the deliveries per second sub is held to: its operator's
// rate, else its own, else def; never above ceiling when ceiling > 0.
// 0 is unlimited.
func subRate(sub hub.Subscription, def, ceiling float64) float64 {
	r := sub.OperatorRate
	if r <= 0 {
		r = sub.Rate
	}
	if r <= 0 {
		r = def
	}
	if ceiling > 0 && (r <= 0 || r > ceiling) {
		r = ceiling
	}
	return max(r, 0)
}

// limitOf is r deliveries per second as a rate.Limit; 0 is unlimited.
func limitOf(r float64) rate.Limit {
	if r <= 0 {
		return rate.Inf
	}
	return rate.Limit(r)
}

// pace waits until the queue may ask for a slot of its host for its next
// attempt: for the host's Retry-After pause to end, so that no token is
// spent waiting it out, for its subscription's token, then for the end of
// a pause that came meanwhile and the host's token. It returns false when
// ctx ended first.
func (q *queue) pace(ctx context.Context) bool {
	l := q.w.limit
	if q.rate == nil && l.perSecond == 0 && subRate(q.getSub(), q.w.cfg.DefaultRate, q.w.cfg.MaxRate) == 0 {
		return true // no rate: the host's pause is left to hostLimit.acquire
	}
	q.dropSlot() // a rate came since q was lined: no slot held while waiting for it
	return l.pace(ctx, q.host, false) == nil && q.subToken(ctx) && l.pace(ctx, q.host, true) == nil
}

// subToken takes a token of the subscription's rate, waiting for it. A
// changed subscription (q.wake) ends the wait early to take the token at
// the rate it now has, so an operator's new rate applies to a waiting
// queue at once; so does an append to its channel, harmlessly: the queue
// reads the log again after the delivery.
func (q *queue) subToken(ctx context.Context) bool {
	for {
		lim := limitOf(subRate(q.getSub(), q.w.cfg.DefaultRate, q.w.cfg.MaxRate))
		switch {
		case q.rate == nil && lim == rate.Inf:
			return true
		case q.rate == nil:
			q.rate = rate.NewLimiter(lim, 1)
		case q.rate.Limit() != lim:
			q.rate.SetLimit(lim)
		}
		res := q.rate.Reserve()
		d := res.Delay()
		if d == 0 {
			return true
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			t.Stop()
			res.Cancel()
			return false
		case <-q.wake:
			t.Stop()
			res.Cancel()
		}
	}
}

// readyAt is the earliest time from at when the rates of q's
// subscription and host and its host's Retry-After pause, as they stand,
// let q's next attempt go: what the attempt log names as its next retry.
func (q *queue) readyAt(at time.Time) time.Time {
	return q.w.limit.readyAt(q.host, tokenAt(q.rate, at))
}

// readyAt is the earliest time from at when host's pause has ended and
// its rate has a token, as they stand.
func (l *hostLimit) readyAt(host string, at time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.hosts[host]
	if s == nil {
		return at
	}
	if s.adapt.pause.After(at) {
		at = s.adapt.pause
	}
	return tokenAt(s.pacer, at)
}

// tokenAt is the earliest time from at when lim, a bucket of one token,
// has its token, as it stands; at when lim is nil or unlimited.
func tokenAt(lim *rate.Limiter, at time.Time) time.Time {
	if lim == nil || lim.Limit() == rate.Inf || lim.Limit() <= 0 {
		return at
	}
	if tok := lim.TokensAt(at); tok < 1 {
		at = at.Add(time.Duration((1 - tok) / float64(lim.Limit()) * float64(time.Second)))
	}
	return at
}

// pace waits for host's Retry-After pause to end, then, with token, takes
// a token of the per-host rate (Config.PerHostRate) when there is one.
func (l *hostLimit) pace(ctx context.Context, host string, token bool) error {
	l.mu.Lock()
	s := l.semLocked(host, time.Now())
	s.pacing++
	if s.pacer == nil && l.perSecond > 0 {
		s.pacer = rate.NewLimiter(rate.Limit(l.perSecond), 1)
	}
	lim := s.pacer
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		s.pacing--
		l.mu.Unlock()
	}()
	for {
		l.mu.Lock()
		pause := s.adapt.pause
		l.mu.Unlock()
		if !time.Now().Before(pause) {
			break
		}
		if !sleep(ctx, time.Until(pause), nil, nil) {
			return fmt.Errorf("delivery: waiting out the pause of host %s: %w", host, ctx.Err())
		}
	}
	if lim == nil || !token {
		return nil
	}
	if err := lim.Wait(ctx); err != nil {
		return fmt.Errorf("delivery: waiting for the rate of host %s: %w", host, err)
	}
	return nil
}
