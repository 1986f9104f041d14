package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMetrics_ExposesCountersAndGauges(t *testing.T) {
	m := New(Sources{
		Subscriptions: func() []SubGauge {
			return []SubGauge{{ID: "s1", Channel: "demo", State: "failing", Backlog: 7, DeadLetters: 2, CallbackBreakerOpen: true}}
		},
		SubscriptionStates: func() (map[string]int, int) { return map[string]int{"active": 99999, "failing": 1}, 2 },
		WebSockets:         func() int { return 3 },
		Events:             func() int { return 5 },
		WebSocketsRefused:  func() uint64 { return 7 },
		LogSize:            func(context.Context) (uint64, uint64, error) { return 42, 4096, nil },
		SubscriptionLimits: func() (int, uint64, uint64) { return 12, 3, 4 },
		AttemptLog:         func() (uint64, uint64) { return 30, 6 },
		Hosts: func() []HostGauge {
			return []HostGauge{{Host: "cb.example:443", Limit: 12, InFlight: 5, Paused: true, Rate: 2.5, RateWaiting: 4, BaseSeconds: 0.0015, SmoothedSeconds: 0.004, BreakerOpen: true, BreakerFailures: 5}, {Host: "free.example:443", Limit: 8}}
		},
	})
	m.Published("demo", 100, time.Millisecond)
	m.Published("demo", 50, time.Millisecond)
	m.Rejected("invalid")
	m.Verified("subscribe", true)
	m.Unstored("subscribe")
	m.GapRecorded("demo")
	m.Attempted("delivered", 2*time.Millisecond, 5*time.Millisecond)
	m.Attempted("failed", time.Millisecond, 0)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	out := string(body)
	for _, want := range []string{
		`rshub_publishes_total{channel="demo"} 2`,
		`rshub_publish_bytes_total 150`,
		`rshub_publish_rejects_total{reason="invalid"} 1`,
		`rshub_verifications_total{mode="subscribe",result="ok"} 1`,
		`rshub_subscription_store_failures_total{mode="subscribe"} 1`,
		`rshub_gaps_total{channel="demo"} 1`,
		`rshub_deliveries_total{outcome="delivered"} 1`,
		`rshub_deliveries_total{outcome="failed"} 1`,
		`rshub_delivery_lag_seconds_count 1`,
		`rshub_subscription_backlog{channel="demo",state="failing",subscription="s1"} 7`,
		`rshub_subscription_dead_letters{channel="demo",subscription="s1"} 2`,
		`rshub_subscriptions{state="active"} 99999`,
		`rshub_subscriptions{state="failing"} 1`,
		`rshub_dead_letters 2`,
		`rshub_websocket_connections 3`,
		`rshub_events_connections 5`,
		`rshub_websocket_protocol_closed_total 7`,
		`rshub_log_messages 42`,
		`rshub_log_bytes 4096`,
		`rshub_subscriptions_counted 12`,
		`rshub_subscription_limit_refusals_total{limit="hub"} 3`,
		`rshub_subscription_limit_refusals_total{limit="callback_host"} 4`,
		`rshub_attempt_log_records_total{result="written"} 30`,
		`rshub_attempt_log_records_total{result="dropped"} 6`,
		`rshub_delivery_host_limit{host="cb.example:443"} 12`,
		`rshub_delivery_host_answer_seconds{host="cb.example:443",kind="base"} 0.0015`,
		`rshub_delivery_host_answer_seconds{host="cb.example:443",kind="smoothed"} 0.004`,
		`rshub_delivery_host_in_flight{host="cb.example:443"} 5`,
		`rshub_delivery_host_paused{host="cb.example:443"} 1`,
		`rshub_delivery_host_rate{host="cb.example:443"} 2.5`,
		`rshub_delivery_host_rate_waiting{host="cb.example:443"} 4`,
		`rshub_delivery_host_rate_waiting{host="free.example:443"} 0`,
		`rshub_delivery_host_breaker_open{host="cb.example:443"} 1`,
		`rshub_delivery_host_breaker_open{host="free.example:443"} 0`,
		`rshub_delivery_host_breaker_failures{host="cb.example:443"} 5`,
		`rshub_subscription_callback_breaker_open{channel="demo",subscription="s1"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(out, `rshub_delivery_host_rate{host="free.example:443"}`) {
		t.Errorf("a host without a rate has a rate gauge")
	}
}
