package delivery

import (
	"reflect"
	"testing"
	"time"
)

func TestSchedule_DelayGrowsCapsAndExhausts(t *testing.T) {
	t.Parallel()
	s := Schedule{Initial: time.Second, Max: 10 * time.Second, Multiplier: 2, Attempts: 6}
	tests := []struct {
		attempt int
		want    time.Duration
		ok      bool
	}{
		{0, time.Second, true}, // treated as 1
		{1, time.Second, true},
		{2, 2 * time.Second, true},
		{3, 4 * time.Second, true},
		{4, 8 * time.Second, true},
		{5, 10 * time.Second, true}, // capped
		{6, 0, false},               // 6 attempts made
		{7, 0, false},
	}
	for _, tt := range tests {
		got, ok := s.Delay(tt.attempt, 0.5)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Delay(%d) = %v, %v; want %v, %v", tt.attempt, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSchedule_JitterSpreadsSymmetrically(t *testing.T) {
	t.Parallel()
	s := Schedule{Initial: 10 * time.Second, Multiplier: 1, Jitter: 0.2}
	tests := []struct {
		rnd  float64
		want time.Duration
	}{
		{0, 8 * time.Second},
		{0.25, 9 * time.Second},
		{0.5, 10 * time.Second},
		{1, 12 * time.Second},
		{-3, 8 * time.Second}, // clamped
		{7, 12 * time.Second}, // clamped
	}
	for _, tt := range tests {
		got, ok := s.Delay(1, tt.rnd)
		if !ok || got != tt.want {
			t.Errorf("Delay(1, %v) = %v, %v; want %v", tt.rnd, got, ok, tt.want)
		}
	}
}

func TestSchedule_MaxElapsedExhausts(t *testing.T) {
	t.Parallel()
	s := Schedule{Initial: time.Minute, Multiplier: 1, MaxElapsed: 3 * time.Minute}
	for attempt, wantOK := range map[int]bool{1: true, 2: true, 3: true, 4: false, 100: false} {
		if _, ok := s.Delay(attempt, 0.5); ok != wantOK {
			t.Errorf("Delay(%d) ok = %v, want %v", attempt, ok, wantOK)
		}
	}
}

func TestSchedule_UnlimitedAttemptsNeverExhaust(t *testing.T) {
	t.Parallel()
	s := Schedule{Initial: time.Millisecond, Max: time.Second, Multiplier: 10}
	if d, ok := s.Delay(1_000_000, 0.5); !ok || d != time.Second {
		t.Fatalf("Delay(1e6) = %v, %v", d, ok)
	}
	huge := Schedule{Initial: time.Hour, Multiplier: 1e6}
	if d, ok := huge.Delay(100, 0.5); !ok || d <= 0 {
		t.Fatalf("overflowing schedule Delay = %v, %v", d, ok)
	}
}

func TestSchedule_StepsAreExplicit(t *testing.T) {
	t.Parallel()
	s := Schedule{Steps: []time.Duration{time.Second, time.Minute}, Attempts: 3}
	tests := []struct {
		attempt int
		want    time.Duration
		ok      bool
	}{
		{1, time.Second, true},
		{2, time.Minute, true},
		{3, 0, false},
	}
	for _, tt := range tests {
		got, ok := s.Delay(tt.attempt, 0.9)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Delay(%d) = %v, %v; want %v, %v", tt.attempt, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDefaultSchedule_AboutFifteenAttemptsWithinADay(t *testing.T) {
	t.Parallel()
	s := DefaultSchedule()
	var total time.Duration
	n := 1
	for ; ; n++ {
		d, ok := s.Delay(n, 0.5)
		if !ok {
			break
		}
		if d > time.Hour {
			t.Fatalf("wait %v after attempt %d exceeds the cap", d, n)
		}
		total += d
	}
	if n != 15 {
		t.Errorf("attempts = %d, want 15", n)
	}
	if total > 24*time.Hour || total < time.Hour {
		t.Errorf("total wait = %v", total)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	def := DefaultSchedule()
	tests := []struct {
		in   string
		want Schedule
	}{
		{"", def},
		{"1s,x2,max=1h,attempts=15,jitter=0.2", def},
		{"1s, x2, max=1h, attempts=15, jitter=0.2, elapsed=24h", def},
		{"10ms,x3,max=1s,attempts=4,jitter=0,elapsed=0s",
			Schedule{Initial: 10 * time.Millisecond, Multiplier: 3, Max: time.Second, Attempts: 4}},
		{"5ms", func() Schedule { s := def; s.Initial = 5 * time.Millisecond; return s }()},
		{"1s,10s,1m,jitter=0.1",
			Schedule{Initial: time.Second, Max: time.Hour, Multiplier: 2, Jitter: 0.1, Attempts: 4, MaxElapsed: 24 * time.Hour,
				Steps: []time.Duration{time.Second, 10 * time.Second, time.Minute}}},
		{"1s,10s,attempts=2",
			Schedule{Initial: time.Second, Max: time.Hour, Multiplier: 2, Jitter: 0.2, Attempts: 2, MaxElapsed: 24 * time.Hour,
				Steps: []time.Duration{time.Second, 10 * time.Second}}},
	}
	for _, tt := range tests {
		got, err := ParseSchedule(tt.in)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSchedule(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseSchedule_RejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"soon", "1s,x0.5", "1s,xx", "attempts=-1", "jitter=2", "max=forever", "colour=blue", "-1s"} {
		if s, err := ParseSchedule(in); err == nil {
			t.Errorf("ParseSchedule(%q) = %+v, want error", in, s)
		}
	}
}

func TestSchedule_StringRoundTrips(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"1s,x2,max=1h,attempts=15,jitter=0.2,elapsed=24h", "1s,10s,1m0s,attempts=4,jitter=0.1,elapsed=24h"} {
		s, err := ParseSchedule(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseSchedule(s.String())
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("round trip of %q via %q = %+v, %v", in, s.String(), back, err)
		}
	}
}

// A schedule that could not produce waits is refused when parsed (the
// --retry flag fails at start, not when delivery begins).
func TestParseSchedule_RefusesZeroInitialWait(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"0", "0 ,  ", "0s,x2"} {
		if _, err := ParseSchedule(text); err == nil {
			t.Errorf("ParseSchedule(%q) accepted a zero initial wait", text)
		}
	}
}
