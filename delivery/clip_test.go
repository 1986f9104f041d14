package delivery

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rshub/rshub/internal/netguard"
)

func TestClip_BoundsAtACharacterWithTheOriginalLength(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short", "http://example.com/cb", "http://example.com/cb"},
		{"at the limit", strings.Repeat("a", maxLogged), strings.Repeat("a", maxLogged)},
		{"long", strings.Repeat("a", 1000), strings.Repeat("a", maxLogged) + "…(1000 bytes)"},
		{"multibyte at the cut", strings.Repeat("a", maxLogged-1) + "é" + "zz", strings.Repeat("a", maxLogged-1) + "…(259 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clip(tt.in)
			if got != tt.want || !utf8.ValidString(got) {
				t.Errorf("clip = %q, want %q", got, tt.want)
			}
		})
	}
	if q := quote(strings.Repeat("\xff", 1000)); len(q) > maxLogged+20 {
		t.Errorf("quote of 1000 invalid bytes is %d bytes long", len(q))
	}
}

func TestClipError_KeepsTheChainAndBoundsTheMessage(t *testing.T) {
	err := netguard.CheckURL("ftp://example.com/" + strings.Repeat("x", 5000))
	c := clipError(err)
	if len(c.Error()) > maxLogged+20 || !errors.Is(c, netguard.ErrRefused) {
		t.Errorf("clipError: %d bytes, refusal kept %v", len(c.Error()), errors.Is(c, netguard.ErrRefused))
	}
}

func TestHealth_LogsOncePerStateChange(t *testing.T) {
	logs := &logBuffer{}
	h := newHealth(slog.New(slog.NewTextHandler(logs, nil)))
	if ok, _, _ := h.state(); !ok {
		t.Fatal("new health not ok")
	}
	down := errors.New("connection refused")
	before := time.Now()
	for range 5 {
		h.fail("reading the log", down)
		h.ok("storing the cursor") // another operation working hides nothing
	}
	ok, since, err := h.state()
	if ok || since.Before(before) || !errors.Is(err, down) {
		t.Fatalf("state = %v %v %v, want stalled since the first failure", ok, since, err)
	}
	h.ok("reading the log")
	h.ok("reading the log")
	if ok, _, _ := h.state(); !ok {
		t.Fatal("not ok after recovery")
	}
	out := logs.String()
	if n, m := strings.Count(out, "reading the log failed"), strings.Count(out, "reading the log works again"); n != 1 || m != 1 {
		t.Errorf("logged %d failures and %d recoveries for one outage of five attempts, want 1 and 1:\n%s", n, m, out)
	}
}

func TestRetryDelay_GrowsWithJitterUpToTheCap(t *testing.T) {
	for n := 1; n < 40; n++ {
		d := min(minRetry<<min(n-1, 30), maxRetry)
		for range 20 {
			if got := retryDelay(n); got < d/2 || got > d {
				t.Fatalf("retryDelay(%d) = %v, want within [%v, %v]", n, got, d/2, d)
			}
		}
	}
}
