package follow

import (
	"testing"
	"time"
)

func TestNextDelay_IntervalBackoffMaxAgeRetryAfterJitter(t *testing.T) {
	base := Timing{Interval: time.Second, MaxBackoff: 10 * time.Second, MaxWait: time.Minute, Jitter: 0.1}
	tests := []struct {
		name          string
		failures      int
		maxAge, retry time.Duration
		r             float64
		want          time.Duration
	}{
		{"success: the interval", 0, 0, 0, 0, time.Second},
		{"jitter only adds", 0, 0, 0, 0.5, 1050 * time.Millisecond},
		{"one failure doubles", 1, 0, 0, 0, 2 * time.Second},
		{"three failures", 3, 0, 0, 0, 8 * time.Second},
		{"backoff is capped", 10, 0, 0, 0, 10 * time.Second},
		{"max-age postpones", 0, 30 * time.Second, 0, 0, 30 * time.Second},
		{"max-age below the interval changes nothing", 0, 100 * time.Millisecond, 0, 0, time.Second},
		{"max-age is capped by MaxWait", 0, time.Hour, 0, 0, time.Minute},
		{"Retry-After beats backoff", 1, 0, 20 * time.Second, 0, 20 * time.Second},
		{"Retry-After is capped", 1, 0, 24 * time.Hour, 0, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NextDelay(base, tt.failures, tt.maxAge, tt.retry, tt.r); got != tt.want {
				t.Errorf("NextDelay = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseMaxAge_CacheControl(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":                                    0,
		"max-age=60":                          time.Minute,
		"public, max-age=5":                   5 * time.Second,
		"public, max-age=31536000, immutable": 31536000 * time.Second,
		"no-cache, max-age=60":                0,
		"no-store":                            0,
		"max-age=x":                           0,
		"max-age=-1":                          0,
		`max-age="7"`:                         7 * time.Second,
	} {
		if got := ParseMaxAge(v); got != want {
			t.Errorf("ParseMaxAge(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestParseRetryAfter_SecondsOrDate(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"Wed, 01 Jan 2025 00:00:30 GMT": 30 * time.Second,
		"Tue, 31 Dec 2024 23:00:00 GMT": 0,
	} {
		if got := ParseRetryAfter(v, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}
