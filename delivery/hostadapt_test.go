package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Each signal moves a host's limit as hostadapt.go says, within the floor
// and the ceiling.
func TestHostAdapt_Observe(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	tests := []struct {
		name      string
		a         hostAdapt
		sig       signal
		rtt       time.Duration
		saturated bool
		at        time.Duration // after t0
		want      float64
	}{
		{"fast and saturated grows by one in slow start", hostAdapt{limit: 8, base: ms}, signalFast, ms, true, 0, 9},
		{"fast and saturated grows by 1/limit after a back-off", hostAdapt{limit: 8, base: ms, backedOff: true}, signalFast, ms, true, 0, 8.125},
		{"fast but not saturated holds", hostAdapt{limit: 8, base: ms}, signalFast, ms, false, 0, 8},
		{"growth stops at the ceiling", hostAdapt{limit: 16, base: ms}, signalFast, ms, true, 0, 16},
		{"pressure halves", hostAdapt{limit: 16, base: ms}, signalPressure, ms, true, 0, 8},
		{"pressure stops at the floor", hostAdapt{limit: 3, base: ms}, signalPressure, ms, true, 0, 2},
		{"one cut per round trip", hostAdapt{limit: 16, base: ms, lastCut: t0}, signalPressure, 50 * ms, true, 20 * ms, 16},
		{"the next round trip cuts again", hostAdapt{limit: 16, base: ms, lastCut: t0}, signalPressure, 50 * ms, true, 60 * ms, 8},
		{"a slow first answer is pressure", hostAdapt{limit: 16, base: ms}, signalFast, 400 * ms, true, 0, 8},
		{"one slow answer among fast ones is not", hostAdapt{limit: 8, base: ms, srtt: ms}, signalFast, 400 * ms, true, 0, 9},
		{"slow answers for a while are pressure", hostAdapt{limit: 16, base: ms, srtt: 150 * ms}, signalFast, 400 * ms, true, 0, 8},
		{"a few ms slower is not slow", hostAdapt{limit: 8, base: ms}, signalFast, 20 * ms, true, 0, 9},
		{"no signal holds", hostAdapt{limit: 8, base: ms}, signalNone, 400 * ms, true, 0, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			a.observe(tt.sig, tt.rtt, 0, tt.saturated, t0.Add(tt.at), 2, 16)
			if a.limit != tt.want {
				t.Fatalf("limit = %v, want %v", a.limit, tt.want)
			}
		})
	}
}

// Retry-After pauses the host, never shortens a pause running, and is
// bounded by MaxRetryAfter.
func TestHostAdapt_RetryAfterPauses(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var a hostAdapt
	a.limit = 8
	a.observe(signalPressure, time.Millisecond, 30*time.Second, true, t0, 1, 64)
	if want := t0.Add(30 * time.Second); !a.pause.Equal(want) {
		t.Fatalf("pause = %v, want %v", a.pause, want)
	}
	a.observe(signalPressure, time.Millisecond, time.Second, true, t0.Add(time.Second), 1, 64)
	if want := t0.Add(30 * time.Second); !a.pause.Equal(want) {
		t.Fatalf("a shorter Retry-After moved the pause to %v", a.pause)
	}
	a.observe(signalPressure, time.Millisecond, 48*time.Hour, true, t0, 1, 64)
	if want := t0.Add(MaxRetryAfter); !a.pause.Equal(want) {
		t.Fatalf("pause = %v, want bounded at %v", a.pause, want)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestSignalOf(t *testing.T) {
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
	}
	for _, tt := range tests {
		if got := signalOf(tt.a); got != tt.want {
			t.Errorf("signalOf(%+v) = %v, want %v", tt.a, got, tt.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
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
