package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
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

// hanging is a dependency that stops answering while hang is set: its
// check blocks, ignoring its context, until the test releases it (as a
// store client stuck on a connection that went silent would).
type hanging struct {
	mu      sync.Mutex
	release chan struct{} // nil: answers at once
}

func (d *hanging) hang() { d.mu.Lock(); d.release = make(chan struct{}); d.mu.Unlock() }

func (d *hanging) answer() {
	d.mu.Lock()
	if d.release != nil {
		close(d.release)
		d.release = nil
	}
	d.mu.Unlock()
}

func (d *hanging) check(context.Context) error {
	d.mu.Lock()
	wait := d.release
	d.mu.Unlock()
	if wait != nil {
		<-wait
	}
	return nil
}

// runHealth runs h's background loop, every few milliseconds, until the
// test ends.
func runHealth(t *testing.T, h *health) {
	h.every = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// get calls fn and returns its status, body and how long it took.
func get(fn http.HandlerFunc) (int, string, time.Duration) {
	rec := httptest.NewRecorder()
	start := time.Now()
	fn(rec, httptest.NewRequest("GET", "/", nil))
	return rec.Code, rec.Body.String(), time.Since(start)
}

// awaitReady waits until /readyz answers code with a body containing want.
func awaitReady(t *testing.T, h *health, code int, want string) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, func() bool {
		c, body, _ := get(h.serveReady)
		return c == code && strings.Contains(body, want)
	}, "readyz %d %q", code, want)
}

func TestHealth_HealthzFailsOnlyAfterUnhealthyAfter(t *testing.T) {
	dep := &switchable{}
	h := newHealth([]probe{{"log", dep.check}}, time.Minute, slog.New(slog.DiscardHandler))
	clock := &testenv.Clock{}
	h.now = clock.Now
	runHealth(t, h)

	awaitReady(t, h, 200, "ready")
	dep.set(errors.New("connection closed"))
	awaitReady(t, h, 503, "log unreachable: connection closed")
	if code, _, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz right after the log went down = %d, want 200 (it may still recover)", code)
	}
	clock.Advance(59 * time.Second)
	if code, _, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz 59 s down = %d, want 200", code)
	}
	clock.Advance(2 * time.Second)
	if code, body, _ := get(h.serveHealth); code != 503 || !strings.Contains(body, "connection closed") {
		t.Fatalf("healthz 61 s down = %d %q, want 503 with the reason", code, body)
	}
	dep.set(nil)
	awaitReady(t, h, 200, "ready")
	if code, _, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz after recovery = %d, want 200", code)
	}
}

// /readyz and /healthz answer from what the background checks found, at
// once, whatever a dependency does: "starting" before its first answer, its
// last answer while a check hangs, unreachable once the check has hung for
// probeTimeout, ready again as soon as it answers.
func TestHealth_AnswersAtOnceWhileADependencyHangs(t *testing.T) {
	const quick = 100 * time.Millisecond
	store, log := &hanging{}, &switchable{}
	store.hang()
	t.Cleanup(store.answer)
	h := newHealth([]probe{{"log", log.check}, {"store", store.check}}, time.Minute, slog.New(slog.DiscardHandler))
	runHealth(t, h)
	ask := func(what string, want int, reason string) {
		t.Helper()
		if _, _, took := get(h.serveHealth); took > quick {
			t.Fatalf("%s: healthz answered in %v, want within %v", what, took, quick)
		}
		code, body, took := get(h.serveReady)
		if took > quick || code != want || !strings.Contains(body, reason) {
			t.Fatalf("%s: readyz = %d %q in %v, want %d %q within %v", what, code, body, took, want, reason, quick)
		}
	}
	ask("before the store first answered", 503, "starting")
	awaitReady(t, h, 503, "store unreachable: no answer within")
	ask("the store hanging", 503, "store unreachable: no answer within")
	store.answer()
	awaitReady(t, h, 200, "ready")
	store.hang()
	ask("the store hanging again, before the check times out", 200, "ready")
	awaitReady(t, h, 503, "store unreachable: no answer within")
	ask("the store hanging again", 503, "store unreachable")
}

// The reason names every dependency that fails, not only the first: an
// operator sees a loop still stalled behind a store that is down.
func TestHealth_ReadyzNamesEveryFailingDependency(t *testing.T) {
	store, pull := &switchable{}, &switchable{}
	h := newHealth([]probe{{"store", store.check}, {"pull mode", pull.check}}, time.Minute, slog.New(slog.DiscardHandler))
	runHealth(t, h)
	store.set(errors.New("connection refused"))
	pull.set(errors.New("stalled"))
	awaitReady(t, h, 503, "store unreachable: connection refused; pull mode unreachable: stalled")
	store.set(nil)
	awaitReady(t, h, 503, "pull mode unreachable: stalled")
	pull.set(nil)
	awaitReady(t, h, 200, "ready")
}

// A degraded dependency (an edge hub's link to its origin) makes /readyz
// fail with its own words but never /healthz: restarting the hub would
// not mend the link. A real fault beside it still does.
func TestHealth_DegradedIsUnreadyButNeverUnhealthy(t *testing.T) {
	link, store := &switchable{}, &switchable{}
	h := newHealth([]probe{{"store", store.check}, {"upstream", link.check}}, time.Minute, slog.New(slog.DiscardHandler))
	clock := &testenv.Clock{}
	h.now = clock.Now
	runHealth(t, h)
	awaitReady(t, h, 200, "ready")
	link.set(degradedError{errors.New("stale since 2024-01-01T00:00:00Z")})
	awaitReady(t, h, 503, "stale since 2024-01-01T00:00:00Z")
	if _, body, _ := get(h.serveReady); strings.Contains(body, "unreachable") {
		t.Fatalf("readyz %q: a degraded state is given as it is", body)
	}
	clock.Advance(2 * time.Minute)
	if code, body, _ := get(h.serveHealth); code != 200 {
		t.Fatalf("healthz degraded for 2 min = %d %q, want 200", code, body)
	}
	store.set(errors.New("connection refused"))
	awaitReady(t, h, 503, "store unreachable: connection refused; stale since")
	clock.Advance(61 * time.Second)
	if code, _, _ := get(h.serveHealth); code != 503 {
		t.Fatalf("healthz with the store down 61 s = %d, want 503", code)
	}
	store.set(nil)
	link.set(nil)
	awaitReady(t, h, 200, "ready")
}
