package hub

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Attempt is one webhook delivery attempt as a subscription's attempt log
// keeps it (Store.AddAttempts). Every field is bounded (ClipAttempt), so
// the log of a subscription is at most AttemptLogLen records of a few
// kilobytes each.
type Attempt struct {
	SubID string    `json:"subscription"`
	Time  time.Time `json:"time"` // when the attempt ended
	Seq   uint64    `json:"seq"`  // the log sequence delivered (a coalesced run's last)
	// Attempt counts the attempts of Seq: 1 for the first.
	Attempt int `json:"attempt"`
	// Status is the callback's HTTP status, 0 when no response came.
	Status    int     `json:"status"`
	LatencyMS float64 `json:"latencyMs"` // how long the POST took
	// Headers are the response headers the callback sent that
	// AttemptHeader keeps, and Body the first AttemptBodyLen bytes of its body, for
	// answers other than 2xx (they say why a callback refuses).
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Error is why the attempt failed ("" when it delivered).
	Error string `json:"error,omitempty"`
	// NextRetry is when the notification is attempted again; zero when
	// it was delivered, gone (410) or given up (a dead letter).
	NextRetry time.Time `json:"nextRetry,omitzero"`
}

// Bounds of the attempt log.
const (
	// AttemptLogLen is how many attempts a subscription's log keeps: the
	// newest.
	AttemptLogLen = 50
	// AttemptBodyLen bounds the response body an attempt keeps, in bytes.
	AttemptBodyLen = 512
	// attemptValueLen bounds a header value and the error an attempt keeps.
	attemptValueLen = 512
	// AttemptLogTTL is how long a store keeps a subscription's log after
	// its last write: a log outlives its subscription only when written
	// in a race with the subscription's deletion.
	AttemptLogTTL = 7 * 24 * time.Hour
)

// AttemptHeader reports whether an attempt keeps the response header
// name (canonical, as http.CanonicalHeaderKey makes it): Content-Type,
// Content-Length, Retry-After, Location, Server, Www-Authenticate and
// X-Request-Id.
func AttemptHeader(name string) bool {
	switch name {
	case "Content-Type", "Content-Length", "Retry-After", "Location", "Server", "Www-Authenticate", "X-Request-Id":
		return true
	}
	return false
}

// ClipAttempt returns a bounded as a store keeps it: the body cut to
// AttemptBodyLen bytes, headers AttemptHeader does not keep dropped, values
// and the error cut, all valid UTF-8. It is idempotent.
func ClipAttempt(a Attempt) Attempt {
	a.Body = clipUTF8(a.Body, AttemptBodyLen)
	a.Error = clipUTF8(a.Error, attemptValueLen)
	if a.Status < 0 || a.Status > 999 {
		a.Status = 0
	}
	a.Attempt = max(a.Attempt, 0)
	a.LatencyMS = max(a.LatencyMS, 0)
	if len(a.Headers) == 0 {
		a.Headers = nil
		return a
	}
	kept := make(map[string]string, len(a.Headers))
	for k, v := range a.Headers {
		if k = http.CanonicalHeaderKey(k); AttemptHeader(k) {
			kept[k] = clipUTF8(v, attemptValueLen)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	a.Headers = kept
	return a
}

// clipUTF8 returns s as valid UTF-8 of at most n bytes, cut at a rune
// boundary.
func clipUTF8(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
