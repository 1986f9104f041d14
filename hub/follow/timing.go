package follow

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Timing is a follower's poll schedule.
type Timing struct {
	// Interval is the time between two successful polls.
	Interval time.Duration
	// MaxBackoff bounds the wait after failures (default 10 minutes, at
	// least Interval).
	MaxBackoff time.Duration
	// MaxWait bounds how long a Cache-Control max-age or a Retry-After may
	// postpone a poll (default 1 hour, at least Interval).
	MaxWait time.Duration
	// Jitter is the largest fraction of the wait added at random (default 0.1).
	Jitter float64
}

func (t Timing) normalized() Timing {
	if t.MaxBackoff <= 0 {
		t.MaxBackoff = 10 * time.Minute
	}
	if t.MaxWait <= 0 {
		t.MaxWait = time.Hour
	}
	t.MaxBackoff = max(t.MaxBackoff, t.Interval)
	t.MaxWait = max(t.MaxWait, t.Interval)
	if t.Jitter <= 0 {
		t.Jitter = 0.1
	}
	return t
}

// NextDelay is the wait before the next poll: Interval after a success,
// Interval·2^failures (at most MaxBackoff) after failures in a row, never
// less than the Source's max-age or Retry-After (each at most MaxWait),
// plus jitter·r of itself, r in [0, 1). Jitter only adds, so a poll never
// comes before what the Source asked for.
func NextDelay(t Timing, failures int, maxAge, retryAfter time.Duration, r float64) time.Duration {
	t = t.normalized()
	d := t.Interval
	for i := 0; i < failures && d < t.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, t.MaxBackoff)
	d = max(d, min(maxAge, t.MaxWait), min(retryAfter, t.MaxWait))
	return d + time.Duration(float64(d)*t.Jitter*r)
}

// ParseMaxAge returns the max-age of a Cache-Control header value, 0 when
// it has none or says no-cache or no-store.
func ParseMaxAge(cacheControl string) time.Duration {
	var age time.Duration
	for _, part := range strings.Split(cacheControl, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch strings.ToLower(k) {
		case "no-cache", "no-store":
			return 0
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64); err == nil && n > 0 {
				age = time.Duration(min(n, int64(1<<32))) * time.Second
			}
		}
	}
	return age
}

// ParseRetryAfter returns the wait a Retry-After header value asks for
// (delay seconds or an HTTP date, relative to now), 0 when it is absent,
// invalid or past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(1<<32))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
