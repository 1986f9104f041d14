package delivery

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseSchedule: any text either is refused or gives a valid schedule
// whose String parses back to the same schedule.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"1s,x2,max=1h,attempts=15,jitter=0.2", "1s,10s,1m", "10ms,x2,max=50ms,attempts=3,elapsed=24h", "", "x", "1s,x-1", "max=", "1h,attempts=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSchedule(text)
		if err != nil {
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("ParseSchedule(%q) accepted an invalid schedule: %v", text, err)
		}
		again, err := ParseSchedule(s.String())
		if err != nil || again.String() != s.String() {
			t.Fatalf("String %q of ParseSchedule(%q) does not parse back: %v", s.String(), text, err)
		}
		for n := 1; n < 50; n++ {
			if d, more := s.Delay(n, 0.5); more && d < 0 {
				t.Fatalf("negative delay %v at attempt %d", d, n)
			}
		}
	})
}

// FuzzParseRetryAfter: any header value gives a wait in [0, MaxRetryAfter],
// and a delay-seconds value its own number of seconds when within it.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "3", "86400", "-1", "1e3", "Thu, 26 Nov 2026 10:00:30 GMT", "Thursday, 26-Nov-26 10:01:00 GMT", "Thu Nov 26 10:00:05 2026", "", " 7 ", "999999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := parseRetryAfter(v, now)
		if d < 0 || d > MaxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v, outside [0, %v]", v, d, MaxRetryAfter)
		}
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 && n < 600 && strings.Trim(strings.TrimSpace(v), "0123456789") == "" && d != time.Duration(n)*time.Second {
			t.Fatalf("parseRetryAfter(%q) = %v, want %ds", v, d, n)
		}
	})
}
