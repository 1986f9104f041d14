package delivery

import (
	"testing"
	"time"
)

func TestBreaker_OpensAfterConsecutiveFailures(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	b := NewBreaker(BreakerConfig{Failures: 3, CoolDown: 10 * time.Second})
	for i := 0; i < 2; i++ {
		b.Failure(t0)
		if ok, _ := b.Allow(t0); !ok {
			t.Fatalf("refused after %d failures", i+1)
		}
	}
	b.Success(t0) // resets the count
	b.Failure(t0)
	b.Failure(t0)
	if s := b.State(t0); s != BreakerClosed {
		t.Fatalf("state after success and 2 failures = %v", s)
	}
	b.Failure(t0)
	if s := b.State(t0); s != BreakerOpen {
		t.Fatalf("state after 3 consecutive failures = %v, want open", s)
	}
	ok, retry := b.Allow(t0.Add(time.Second))
	if ok || !retry.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("Allow while open = %v, %v", ok, retry)
	}
}

func TestBreaker_HalfOpenLetsOneProbeThrough(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	cool := 10 * time.Second
	b := NewBreaker(BreakerConfig{Failures: 1, CoolDown: cool})
	b.Failure(t0)
	t1 := t0.Add(cool)
	if s := b.State(t1); s != BreakerHalfOpen {
		t.Fatalf("state after cool-down = %v, want half-open", s)
	}
	if ok, _ := b.Allow(t1); !ok {
		t.Fatal("probe refused")
	}
	if ok, _ := b.Allow(t1); ok {
		t.Fatal("second concurrent probe allowed")
	}
	// Failed probe: open again for a full cool-down.
	b.Failure(t1)
	if s := b.State(t1.Add(cool - time.Nanosecond)); s != BreakerOpen {
		t.Fatalf("state after failed probe = %v, want open", s)
	}
	t2 := t1.Add(cool)
	if ok, _ := b.Allow(t2); !ok {
		t.Fatal("second probe refused")
	}
	b.Success(t2)
	if s := b.State(t2); s != BreakerClosed || b.ConsecutiveFailures() != 0 {
		t.Fatalf("after successful probe: %v, %d failures", s, b.ConsecutiveFailures())
	}
}

func TestBreaker_AbandonedProbeFreesTheSlot(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	b := NewBreaker(BreakerConfig{Failures: 1, CoolDown: time.Second})
	b.Failure(t0)
	t1 := t0.Add(time.Second)
	if ok, _ := b.Allow(t1); !ok {
		t.Fatal("probe refused")
	}
	b.Abandon(t1)
	if ok, _ := b.Allow(t1); !ok {
		t.Fatal("probe slot not freed by Abandon")
	}
}

func TestBreaker_NegativeFailuresDisables(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	b := NewBreaker(BreakerConfig{Failures: -1})
	for i := 0; i < 100; i++ {
		b.Failure(t0)
	}
	if ok, _ := b.Allow(t0); !ok {
		t.Fatal("disabled breaker refused")
	}
}

func TestBreakerSet_PerHostAndWakesWaiters(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	s := newBreakerSet(BreakerConfig{Failures: 2, CoolDown: time.Minute})
	s.report("bad:80", t0, outcomeFailure)
	s.report("bad:80", t0, outcomeFailure)
	if ok, _, _ := s.allow("bad:80", t0); ok {
		t.Fatal("open host allowed")
	}
	if ok, _, _ := s.allow("good:80", t0); !ok {
		t.Fatal("other host refused")
	}
	// A probe after the cool-down; a second caller waits for its outcome.
	t1 := t0.Add(time.Minute)
	if ok, _, _ := s.allow("bad:80", t1); !ok {
		t.Fatal("probe refused")
	}
	ok, _, changed := s.allow("bad:80", t1)
	if ok {
		t.Fatal("second probe allowed")
	}
	s.report("bad:80", t1, outcomeSuccess)
	select {
	case <-changed:
	default:
		t.Fatal("waiters not woken by the probe's success")
	}
	if st, n := s.state("bad:80", t1); st != BreakerClosed || n != 0 {
		t.Fatalf("state = %v, %d", st, n)
	}
	if len(s.keys) != 0 {
		t.Fatalf("closed breakers kept: %v", s.keys)
	}
}

// The set's count of failing hosts, which lets allow and a success's
// report skip the lock, follows its breakers: a failure makes one seen at
// once, a success or a prune that drops the last one clears it, and a
// success still resets a host's consecutive failures.
func TestBreakerSet_FailingCountFollowsTheBreakers(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	s := newBreakerSet(BreakerConfig{Failures: 2, CoolDown: time.Minute})
	s.report("a:80", t0, outcomeSuccess)
	if s.failing.Load() != 0 || len(s.keys) != 0 {
		t.Fatal("a success made a breaker")
	}
	s.report("a:80", t0, outcomeFailure)
	s.report("b:80", t0, outcomeSuccess)
	if s.failing.Load() != 1 {
		t.Fatalf("failing = %d after a failure, want 1", s.failing.Load())
	}
	s.report("a:80", t0, outcomeSuccess) // resets a's count
	if s.failing.Load() != 0 {
		t.Fatalf("failing = %d after the success, want 0", s.failing.Load())
	}
	s.report("a:80", t0, outcomeFailure)
	if ok, _, _ := s.allow("a:80", t0); !ok {
		t.Fatal("opened by one failure after a success")
	}
	s.report("a:80", t0, outcomeFailure)
	if ok, _, _ := s.allow("a:80", t0); ok {
		t.Fatal("open host allowed")
	}
	s.prune(map[string]bool{})
	if ok, _, _ := s.allow("a:80", t0); !ok || s.failing.Load() != 0 {
		t.Fatal("a pruned host still refused")
	}
}
