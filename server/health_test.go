package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// switchable is a dependency whose reachability the test decides.
type switchable struct {
	mu  sync.Mutex
	err error
}

func (s *switchable) set(err error) { s.mu.Lock(); s.err = err; s.mu.Unlock() }
func (s *switchable) check(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func TestHealth_HealthzFailsOnlyAfterUnhealthyAfter(t *testing.T) {
	dep := &switchable{}
	h := newHealth([]probe{{"log", dep.check}}, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.now = func() time.Time { return now }
	get := func(fn http.HandlerFunc) (int, string) {
		rec := httptest.NewRecorder()
		fn(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Code, rec.Body.String()
	}

	if code, _ := get(h.serveReady); code != 200 {
		t.Fatalf("ready with a reachable log: %d", code)
	}
	dep.set(errors.New("connection closed"))
	code, body := get(h.serveReady)
	if code != 503 || !strings.Contains(body, "log unreachable: connection closed") {
		t.Fatalf("readyz with the log down = %d %q, want 503 naming the log", code, body)
	}
	if code, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz right after the log went down = %d, want 200 (it may still recover)", code)
	}
	now = now.Add(59 * time.Second)
	h.probe(context.Background())
	if code, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz 59 s down = %d, want 200", code)
	}
	now = now.Add(2 * time.Second)
	h.probe(context.Background())
	code, body = get(h.serveHealth)
	if code != 503 || !strings.Contains(body, "connection closed") {
		t.Fatalf("healthz 61 s down = %d %q, want 503 with the reason", code, body)
	}
	dep.set(nil)
	h.probe(context.Background())
	if code, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz after recovery = %d, want 200", code)
	}
}
