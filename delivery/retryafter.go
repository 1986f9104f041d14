package delivery

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3),
// delay-seconds or an HTTP-date, as a wait from now. An absent, malformed
// or past value is 0; the wait is at most MaxRetryAfter, however far off
// the callback asks.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 64 {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		if digits := strings.TrimLeft(v, "0"); len(digits) > 9 { // beyond any bound worth computing
			return MaxRetryAfter
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0
		}
		return min(time.Duration(n)*time.Second, MaxRetryAfter)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}
