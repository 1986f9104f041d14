package server

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/dashboard"
)

// countingObserver counts the events it sees.
type countingObserver struct{ published, rejected, verified, gaps, unstored int }

func (c *countingObserver) Published(string, int, time.Duration) { c.published++ }
func (c *countingObserver) Rejected(string)                      { c.rejected++ }
func (c *countingObserver) Verified(string, bool)                { c.verified++ }
func (c *countingObserver) GapRecorded(string)                   { c.gaps++ }
func (c *countingObserver) Unstored(string)                      { c.unstored++ }

func TestObservers_FanOutEveryEvent(t *testing.T) {
	a, b := &countingObserver{}, &countingObserver{}
	o := observers{a, b}
	o.Published("demo", 1, 0)
	o.Rejected("x")
	o.Verified("subscribe", true)
	o.GapRecorded("demo")
	o.Unstored("subscribe")
	for _, c := range []*countingObserver{a, b} {
		if *c != (countingObserver{1, 1, 1, 1, 1}) {
			t.Errorf("observer saw %+v, want one of each", *c)
		}
	}
}

func TestWithDashboard_OnlyWithAnAdminToken(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := &countingObserver{}
	if d, obs := withDashboard(Config{}, "http://127.0.0.1:1/", m, logger); d != nil || obs != m {
		t.Errorf("without admin token: dashboard %v, observer %T; want none and the metrics observer", d, obs)
	}
	d, obs := withDashboard(Config{AdminToken: "t"}, "http://127.0.0.1:1/", m, logger)
	if d == nil {
		t.Fatal("with admin token: no dashboard")
	}
	obs.Published("demo", 1, 0)
	if m.published != 1 {
		t.Errorf("metrics observer saw %d publishes through the fan-out, want 1", m.published)
	}
}

func TestDemoAdminToken(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if tok, gen := demoAdminToken(Config{AdminToken: "given", Demo: true}, logger); tok != "given" || gen {
		t.Errorf("given token: %q %v", tok, gen)
	}
	if tok, gen := demoAdminToken(Config{}, logger); tok != "" || gen {
		t.Errorf("no demo, no token: %q %v, want none", tok, gen)
	}
	tok, gen := demoAdminToken(Config{Demo: true}, logger)
	if !gen || len(tok) < 20 {
		t.Errorf("demo without token: %q %v, want a generated token", tok, gen)
	}
	if again, _ := demoAdminToken(Config{Demo: true}, logger); again == tok {
		t.Error("two generated tokens are equal")
	}
}

func TestDashboardURL(t *testing.T) {
	for _, tc := range []struct{ hub, token, want string }{
		{"http://127.0.0.1:8080/", "", "http://127.0.0.1:8080" + dashboard.Path},
		{"https://hub.example.test/websub?x=1", "", "https://hub.example.test/dashboard/"},
		{"http://127.0.0.1:8080/", "A B&c", "http://127.0.0.1:8080/dashboard/#token=A%20B%26c"},
	} {
		if got := dashboardURL(tc.hub, tc.token); got != tc.want {
			t.Errorf("dashboardURL(%q, %q) = %q, want %q", tc.hub, tc.token, got, tc.want)
		}
	}
}

func TestHome_PointsAtOriginDocuments(t *testing.T) {
	got := home(true, "https://hub.example.org/websub/")
	for _, want := range []string{"https://hub.example.org/.well-known/resourcesync", "https://hub.example.org/metrics", "https://hub.example.org/dashboard/"} {
		if !strings.Contains(got, want) {
			t.Errorf("home lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(home(false, "http://h/"), "Dashboard") {
		t.Error("dashboard mentioned without an admin token")
	}
}
