package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Every failed key set read is counted; the WARN line is written at most
// once per keySetLogEvery and role, saying how many were not logged.
func TestKeySetFailures_CountEveryOneLogOncePerMinute(t *testing.T) {
	var logs bytes.Buffer
	counted := map[string]int{}
	k := newKeySetFailures(func(role string) { counted[role]++ }, slog.New(slog.NewTextHandler(&logs, nil)))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	sub, pub := k.reporter("subscriber"), k.reporter("publisher")
	for range 5 {
		sub(errors.New("key set http://idp.internal/keys: the key set URL answered 500"))
		now = now.Add(10 * time.Second)
	}
	pub(errors.New("key set http://idp.internal/pub: timeout"))
	if counted["subscriber"] != 5 || counted["publisher"] != 1 {
		t.Fatalf("counted %v, want every failure", counted)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Fatalf("%d WARN lines, want one per role within the minute:\n%s", n, logs.String())
	}
	now = now.Add(keySetLogEvery)
	sub(errors.New("key set http://idp.internal/keys: still down"))
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	last := lines[len(lines)-1]
	if len(lines) != 3 || !strings.Contains(last, "failures_not_logged=4") || !strings.Contains(last, "http://idp.internal/keys") {
		t.Fatalf("after the minute: %q, want a line naming the URL and the 4 failures not logged", last)
	}
}
