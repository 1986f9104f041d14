package delivery

import (
	"testing"
	"time"
)

// A 429 or 503 that a host answers at once (a rate limiter in front of it,
// answering without doing the work) halves the host's limit, but is not
// the host's fastest answer: taken as its base, every ordinary answer
// after it would look queued for the next 5 to 10 s and hold the limit at
// its start.
func TestHostAdapt_QuickPressureIsNotTheBase(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	b := bounds{floor: 1, start: 8, ceiling: 64}
	a := hostAdapt{limit: 32, backedOff: true}
	at := t0
	answer := func(sig signal, rtt time.Duration) {
		at = at.Add(rtt)
		a.observe(sig, rtt, 0, true, at, b)
	}
	for range 50 { // a distant host: 20 ms answers
		answer(signalFast, 20*ms)
	}
	answer(signalPressure, ms) // a 429 at once
	if a.base() != 20*ms {
		t.Fatalf("base after a quick 429 = %v, want the fastest ordinary answer, 20ms", a.base())
	}
	cut := a.limit
	if cut >= 32 {
		t.Fatalf("limit after a 429 = %v, want it halved from 32", cut)
	}
	for range 100 { // 2 s of 20 ms answers, every slot taken
		answer(signalFast, 20*ms)
	}
	if a.limit <= cut {
		t.Fatalf("limit 2 s after the 429 = %v, want it growing again from %v", a.limit, cut)
	}
}
