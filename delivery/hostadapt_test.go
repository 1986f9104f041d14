package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Each signal and answer time moves a host's limit as hostadapt.go says,
// within the floor and the ceiling.
func TestHostAdapt_Observe(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	// a host whose fastest answer of the window took 1 ms, answering in 1 ms
	quick := func(limit float64) hostAdapt { return hostAdapt{limit: limit, minNow: ms, srtt: ms, window: t0} }
	backedOff := quick(8)
	backedOff.backedOff = true
	cutJustNow := quick(16)
	cutJustNow.lastCut = t0
	queued := quick(16)
	queued.srtt = 5 * ms
	tests := []struct {
		name      string
		a         hostAdapt
		sig       signal
		rtt       time.Duration
		saturated bool
		at        time.Duration // after t0
		want      float64
		wantSlow  bool // slow start over after
	}{
		{"quick and saturated grows by one in slow start", quick(8), signalFast, ms, true, 0, 9, false},
		{"quick and saturated grows by 1/limit after a back-off", backedOff, signalFast, ms, true, 0, 8.125, true},
		{"quick but not saturated holds", quick(8), signalFast, ms, false, 0, 8, false},
		{"growth stops at the ceiling", quick(16), signalFast, ms, true, 0, 16, false},
		{"pressure halves", quick(16), signalPressure, ms, true, 0, 8, true},
		{"pressure stops at the floor", quick(3), signalPressure, ms, true, 0, 2, true},
		{"one cut per round trip", cutJustNow, signalPressure, 50 * ms, true, 20 * ms, 16, true},
		{"the next round trip cuts again", cutJustNow, signalPressure, 50 * ms, true, 60 * ms, 8, true},
		{"answers queueing hold the limit and end slow start", queued, signalFast, 5 * ms, true, 0, 16, true},
		{"one answer some ms slower among quick ones holds", quick(8), signalFast, 30 * ms, true, 0, 8, true},
		{"within three times the base and a millisecond is quick", quick(8), signalFast, 4 * ms, true, 0, 9, false},
		{"answers far beyond the base cut a quarter", quick(16), signalFast, 100 * ms, true, 0, 12, true},
		{"answers far beyond the base cut no lower than the start", quick(5), signalFast, 100 * ms, true, 0, 4, true},
		{"answers far beyond the base do not cut below the start", quick(3), signalFast, 100 * ms, true, 0, 3, true},
		{"a host slow from its first answer is its own base", hostAdapt{limit: 8}, signalFast, 400 * ms, true, 0, 9, false},
		{"no signal holds", quick(8), signalNone, 400 * ms, true, 0, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			a.observe(tt.sig, tt.rtt, 0, tt.saturated, t0.Add(tt.at), bounds{2, 4, 16})
			if a.limit != tt.want {
				t.Fatalf("limit = %v, want %v", a.limit, tt.want)
			}
			if a.backedOff != tt.wantSlow {
				t.Fatalf("slow start over = %v, want %v", a.backedOff, tt.wantSlow)
			}
		})
	}
}

// A host's base is its fastest answer of the last one to two windows: a
// host that became slower for good, from one window to the next, gets a
// slower base, and with it a limit that grows again.
func TestHostAdapt_BaseFollowsTheHost(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	a := hostAdapt{limit: 8}
	a.observe(signalFast, ms, 0, true, t0, bounds{1, 8, 64})
	var held float64
	for i := range 200 { // 50 ms answers from then on, for 20 s
		a.observe(signalFast, 50*ms, 0, true, t0.Add(time.Duration(i)*100*ms), bounds{1, 8, 64})
		if i == 100 {
			held = a.limit
		}
	}
	if a.base() != 50*ms {
		t.Fatalf("base = %v after two windows of 50 ms answers, want 50ms", a.base())
	}
	if a.limit < held+3 {
		t.Fatalf("limit = %v, %v after the first 10 s: a host answering steadily in 50 ms should grow again", a.limit, held)
	}
	a.observe(signalFast, 30*ms, 0, true, t0.Add(20*time.Second), bounds{1, 8, 64})
	a.observe(signalFast, 60*ms, 0, true, t0.Add(26*time.Second), bounds{1, 8, 64})
	if a.base() != 30*ms {
		t.Fatalf("base = %v, want the last window's 30ms", a.base())
	}
	a.observe(signalFast, 60*ms, 0, true, t0.Add(time.Minute), bounds{1, 8, 64})
	if a.base() != 60*ms {
		t.Fatalf("base = %v after a minute idle, want the one answer since, 60ms", a.base())
	}
}

// Answer times that jitter over a range but do not grow with the
// requests in flight (a distant host) let the limit grow to the ceiling;
// answer times that grow with them (a host, or a hub, whose requests
// queue) hold it near where the queue starts.
func TestHostAdapt_JitterGrowsQueueHolds(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	run := func(answer func(i int, limit float64) time.Duration) float64 {
		a := hostAdapt{limit: 1}
		now := t0
		for i := range 20000 {
			rtt := answer(i, a.limit)
			now = now.Add(rtt / time.Duration(max(a.slots(), 1)))
			a.observe(signalFast, rtt, 0, true, now, bounds{1, 8, 64})
		}
		return a.limit
	}
	// 10 to 40 ms, whatever the limit
	if got := run(func(i int, _ float64) time.Duration { return 10*ms + time.Duration(i*7919%31)*ms }); got != 64 {
		t.Errorf("jittery distant host: limit %v, want the ceiling 64", got)
	}
	// 0.1 ms and 50 µs more per request in flight: the queue starts
	// mattering (three times the base and a millisecond) at about 27
	queue := func(_ int, limit float64) time.Duration {
		return 100*time.Microsecond + time.Duration(limit*50)*time.Microsecond
	}
	if got := run(queue); got < 8 || got > 40 {
		t.Errorf("host whose answers queue: limit %v, want between 8 and 40", got)
	}
}

// Retry-After pauses the host, never shortens a pause running, and is
// bounded by MaxRetryAfter.
func TestHostAdapt_RetryAfterPauses(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var a hostAdapt
	a.limit = 8
	a.observe(signalPressure, time.Millisecond, 30*time.Second, true, t0, bounds{1, 8, 64})
	if want := t0.Add(30 * time.Second); !a.pause.Equal(want) {
		t.Fatalf("pause = %v, want %v", a.pause, want)
	}
	a.observe(signalPressure, time.Millisecond, time.Second, true, t0.Add(time.Second), bounds{1, 8, 64})
	if want := t0.Add(30 * time.Second); !a.pause.Equal(want) {
		t.Fatalf("a shorter Retry-After moved the pause to %v", a.pause)
	}
	a.observe(signalPressure, time.Millisecond, 48*time.Hour, true, t0, bounds{1, 8, 64})
	if want := t0.Add(MaxRetryAfter); !a.pause.Equal(want) {
		t.Fatalf("pause = %v, want bounded at %v", a.pause, want)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestSignalOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    attempt
		want signal
	}{
		{attempt{status: 204}, signalFast},
		{attempt{status: 500}, signalFast},
		{attempt{status: 404}, signalFast},
		{attempt{status: http.StatusTooManyRequests}, signalPressure},
		{attempt{status: http.StatusServiceUnavailable}, signalPressure},
		{attempt{err: fmt.Errorf("POST: %w", context.DeadlineExceeded)}, signalPressure},
		{attempt{err: fmt.Errorf("POST: %w", timeoutErr{})}, signalPressure},
		{attempt{err: errors.New("connection refused")}, signalNone},
		{attempt{err: context.Canceled, abandoned: true}, signalNone},
		{attempt{status: http.StatusTooManyRequests, ownPressure: true}, signalNone}, // one callback's own (isolate.go)
	}
	for _, tt := range tests {
		if got := signalOf(tt.a); got != tt.want {
			t.Errorf("signalOf(%+v) = %v, want %v", tt.a, got, tt.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"3", 3 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"86400", MaxRetryAfter},
		{"99999999999999999999999", MaxRetryAfter},
		{"-5", 0},
		{"+5", 0},
		{"1.5", 0},
		{"soon", 0},
		{"Thu, 26 Nov 2026 10:00:30 GMT", 30 * time.Second}, // IMF-fixdate
		{"Thursday, 26-Nov-26 10:01:00 GMT", time.Minute},   // RFC 850
		{"Thu Nov 26 10:00:05 2026", 5 * time.Second},       // asctime
		{"Thu, 26 Nov 2026 09:00:00 GMT", 0},                // past
		{"Fri, 27 Nov 2026 10:00:00 GMT", MaxRetryAfter},    // bounded
		{"Thu, 26 Nov 2026 10:00:30 GMT and more", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// A host idle for longer than restartIdle and two round trips starts its
// next burst at its start limit and ramps back up by one per answer,
// without the ramp's answers growing the limit itself; a shorter pause, or
// a limit not above the start, keeps every slot.
func TestHostAdapt_RampsUpAfterIdle(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	b := bounds{1, 8, 64}
	a := hostAdapt{limit: 40, srtt: ms, minNow: ms, window: t0}
	a.rest(t0)
	a.resume(t0.Add(ms/2), b.start)
	if a.slots() != 40 {
		t.Fatalf("slots = %d after 0.5 ms idle, want all 40", a.slots())
	}
	a.rest(t0.Add(ms))
	a.resume(t0.Add(4*ms), b.start)
	if a.slots() != 8 {
		t.Fatalf("slots = %d after 3 ms idle, want the start 8", a.slots())
	}
	answers := 0
	for now := t0.Add(5 * ms); a.slots() < 40; now = now.Add(ms / 8) {
		a.observe(signalFast, ms, 0, true, now, b)
		answers++
		if answers > 40 {
			t.Fatalf("slots = %d after %d answers: the ramp does not reach the limit", a.slots(), answers)
		}
	}
	if answers != 32 || a.limit != 40 || a.ramp != 0 {
		t.Fatalf("after %d answers: slots %d, limit %v, ramp %v; want 32 answers to reach the limit 40, unchanged, ramp over",
			answers, a.slots(), a.limit, a.ramp)
	}
	low := hostAdapt{limit: 6, srtt: ms, minNow: ms, window: t0}
	low.rest(t0)
	low.resume(t0.Add(time.Second), b.start)
	if low.slots() != 6 {
		t.Fatalf("slots = %d, want 6: a limit below the start does not ramp", low.slots())
	}
}
