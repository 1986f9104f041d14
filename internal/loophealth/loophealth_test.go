package loophealth

import (
	"context"
	"errors"
	"github.com/rshub/rshub/internal/testenv"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHealth_LogsOncePerStateChange(t *testing.T) {
	logs := &testenv.Buffer{}
	h := New(slog.New(slog.NewTextHandler(logs, nil)))
	if ok, _, _ := h.State(); !ok {
		t.Fatal("new health not ok")
	}
	down := errors.New("connection refused")
	before := time.Now()
	ctx := context.Background()
	for range 5 {
		h.Report(ctx, "reading the log", down)
		h.Report(ctx, "storing the cursor", nil) // another operation working hides nothing
	}
	ok, since, err := h.State()
	if ok || since.Before(before) || !errors.Is(err, down) {
		t.Fatalf("state = %v %v %v, want stalled since the first failure", ok, since, err)
	}
	h.Report(ctx, "reading the log", nil)
	h.Report(ctx, "reading the log", nil)
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

// An error that comes with the end of the caller's context is the caller
// stopping: it must not leave the loop stalled with nobody left to clear it.
func TestReport_IgnoresTheCallersOwnEnd(t *testing.T) {
	h := New(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Report(ctx, "reading the log", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Report returned %v, want its error back", err)
	}
	if ok, _, err := h.State(); !ok {
		t.Fatalf("stalled by a call cut short by its own context: %v", err)
	}
}

// Do reports every attempt: the failures of a run stall the loop, the
// attempt that works clears them, and the retries are paced by Backoff.
func TestDo_ClearsItsFailuresWhenItWorks(t *testing.T) {
	h := New(slog.New(slog.DiscardHandler))
	down := errors.New("connection refused")
	calls := 0
	var stalled []bool
	ok := h.Do(context.Background(), "storing a dead letter", func() error {
		ok, _, _ := h.State()
		stalled = append(stalled, !ok)
		if calls++; calls < 3 {
			return down
		}
		return nil
	})
	if !ok || calls != 3 {
		t.Fatalf("Do = %v after %d calls, want true after 3", ok, calls)
	}
	if want := []bool{false, true, true}; !slices.Equal(stalled, want) {
		t.Errorf("stalled before each attempt = %v, want %v", stalled, want)
	}
	if ok, _, err := h.State(); !ok {
		t.Fatalf("still stalled after the attempt that worked: %v", err)
	}
}

func TestBackoff_StopsWithTheContext(t *testing.T) {
	h := New(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	h.Report(ctx, "reading the log", errors.New("down"))
	cancel()
	if h.Backoff(ctx, "reading the log", 0) {
		t.Fatal("Backoff went on after its context ended")
	}
}

// RetryIn is 0 for an operation that works, grows with the failures in a
// row of one that does not, and never exceeds its limit.
func TestRetryIn_FollowsTheFailuresUpToTheLimit(t *testing.T) {
	h := New(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if d := h.RetryIn("listing subscriptions", EngineRetry); d != 0 {
		t.Fatalf("RetryIn of a working operation = %v, want 0", d)
	}
	for range 30 {
		h.Report(ctx, "listing subscriptions", errors.New("down"))
	}
	if d := h.RetryIn("listing subscriptions", EngineRetry); d <= 0 || d > EngineRetry {
		t.Fatalf("RetryIn after 30 failures, limit %v = %v", EngineRetry, d)
	}
	if d := h.RetryIn("listing subscriptions", 0); d < MaxRetry/2 || d > MaxRetry {
		t.Fatalf("RetryIn after 30 failures, no limit = %v, want within [%v, %v]", d, MaxRetry/2, MaxRetry)
	}
	h.Report(ctx, "listing subscriptions", nil)
	if d := h.RetryIn("listing subscriptions", EngineRetry); d != 0 {
		t.Fatalf("RetryIn after the operation worked = %v, want 0", d)
	}
}
