package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// HandlerHiding leaves out every series labelled with a hidden channel
// (counters, the follower's, the per-subscription gauges) and keeps the
// rest; each channel is asked about once per scrape; Handler shows all.
func TestHandlerHiding_LeavesOutHiddenChannels(t *testing.T) {
	m := New(Sources{Subscriptions: func() []SubGauge {
		return []SubGauge{{ID: "s1", Channel: "secret", State: "failing", Backlog: 7}, {ID: "s2", Channel: "demo", State: "failing", Backlog: 1}}
	}})
	for _, ch := range []string{"demo", "secret", "secret"} {
		m.Published(ch, 10, time.Millisecond)
		m.GapRecorded(ch)
		m.Polled(ch, "ok")
	}
	m.KeySetFailed("subscriber")
	asked := map[string]int{}
	scrape := func(hiding bool) string {
		rec := httptest.NewRecorder()
		h := m.Handler()
		if hiding {
			h = m.HandlerHiding(func(ch string) bool { asked[ch]++; return ch == "secret" })
		}
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	out := scrape(true)
	if strings.Contains(out, "secret") {
		t.Errorf("a hidden channel is named:\n%s", out)
	}
	for _, want := range []string{`rshub_publishes_total{channel="demo"} 1`, `rshub_gaps_total{channel="demo"} 1`,
		`rshub_follow_polls_total{channel="demo",outcome="ok"} 1`, `rshub_subscription_backlog{channel="demo",state="failing",subscription="s2"} 1`,
		`rshub_jwks_failures_total{role="subscriber"} 1`, "rshub_publish_bytes_total 30", "go_goroutines"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s", want)
		}
	}
	if asked["secret"] != 1 || asked["demo"] != 1 {
		t.Errorf("asked %v, want each channel once per scrape", asked)
	}
	if all := scrape(false); !strings.Contains(all, `rshub_publishes_total{channel="secret"} 2`) {
		t.Error("Handler hides a channel")
	}
}
