package loophealth

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer collects log output from concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestHealth_LogsOncePerStateChange(t *testing.T) {
	logs := &logBuffer{}
	h := New(slog.New(slog.NewTextHandler(logs, nil)))
	if ok, _, _ := h.State(); !ok {
		t.Fatal("new health not ok")
	}
	down := errors.New("connection refused")
	before := time.Now()
	for range 5 {
		h.Fail("reading the log", down)
		h.OK("storing the cursor") // another operation working hides nothing
	}
	ok, since, err := h.State()
	if ok || since.Before(before) || !errors.Is(err, down) {
		t.Fatalf("state = %v %v %v, want stalled since the first failure", ok, since, err)
	}
	h.OK("reading the log")
	h.OK("reading the log")
	if ok, _, _ := h.State(); !ok {
		t.Fatal("not ok after recovery")
	}
	out := logs.String()
	if n, m := strings.Count(out, "reading the log failed"), strings.Count(out, "reading the log works again"); n != 1 || m != 1 {
		t.Errorf("logged %d failures and %d recoveries for one outage of five attempts, want 1 and 1:\n%s", n, m, out)
	}
}

func TestRetryDelay_GrowsWithJitterUpToTheCap(t *testing.T) {
	for n := 1; n < 40; n++ {
		d := min(MinRetry<<min(n-1, 30), MaxRetry)
		for range 20 {
			if got := Delay(n); got < d/2 || got > d {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", n, got, d/2, d)
			}
		}
	}
}
