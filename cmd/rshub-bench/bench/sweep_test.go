package bench

import (
	"io"
	"math"
	"slices"
	"testing"
)

func TestFastest_PicksTheHighestRateAndTheFewerWorkersOnATie(t *testing.T) {
	pt := func(w int, rate float64) sweepPoint { return sweepPoint{workers: w, f: fanout{rate: rate}} }
	for _, c := range []struct {
		name   string
		points []sweepPoint
		want   int
	}{
		{"none", nil, -1},
		{"the middle one is fastest", []sweepPoint{pt(8, 100), pt(16, 300), pt(32, 200)}, 1},
		{"the last one is fastest", []sweepPoint{pt(8, 100), pt(16, 200), pt(256, 250)}, 2},
		{"a tie goes to fewer workers", []sweepPoint{pt(64, 300), pt(16, 300)}, 1},
		{"an unmeasured rate never wins", []sweepPoint{pt(8, math.NaN()), pt(16, 1)}, 1},
	} {
		if got := fastest(c.points); got != c.want {
			t.Errorf("%s: fastest = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSweepSizes_AddsTheHubsConcurrencyOnceInOrder(t *testing.T) {
	cfg := Defaults()
	cfg.CeilingWorkers = []int{64, 8, 16}
	cfg.Subscribers, cfg.Servers = 1000, 1 // the hub's concurrency: one host's maximum
	if hub := cfg.concurrency(); hub != 64 {
		t.Fatalf("the hub's concurrency on one host is %d; this test assumes the default 64", hub)
	}
	if got := sweepSizes(cfg); !slices.Equal(got, []int{8, 16, 64}) {
		t.Errorf("sweepSizes on one host = %v, want [8 16 64] (the hub's 64 once)", got)
	}
	cfg.Servers = 1000 // a host per callback: the hub has 1,000 in flight
	if got := sweepSizes(cfg); !slices.Equal(got, []int{8, 16, 64, 1000}) {
		t.Errorf("sweepSizes over 1,000 hosts = %v, want [8 16 64 1000]", got)
	}
}

func TestSweepSamples_PrintEverySenderBesideTheHub(t *testing.T) {
	cfg := Defaults()
	points := []sweepPoint{{workers: 8, f: fanout{rate: 10}}, {workers: 32, f: fanout{rate: 40}}}
	got := sweepSamples(cfg, fanout{rate: 30}, points, 1)
	if len(got) != 3 {
		t.Fatalf("%d samples, want one per sender and the in-flight row: %+v", len(got), got)
	}
	for i, p := range points {
		if got[i].Hub != 30 || got[i].Ceiling != p.f.rate || got[i].Better != "info" {
			t.Errorf("sender of %d: %+v, want hub 30 beside %v, info", p.workers, got[i], p.f.rate)
		}
	}
	if last := got[2]; last.Ceiling != 32 || last.Hub != float64(cfg.concurrency()) {
		t.Errorf("in-flight row %+v, want the fastest sender's 32 workers beside the hub's %d", last, cfg.concurrency())
	}
}

func TestWebhookConfig_ScenariosWireTheirHostsAndCounts(t *testing.T) {
	cfg := Defaults()
	one := webhookConfig(cfg, ScenarioWebhookOneHost)
	if one.Servers != 1 || one.Subscribers != 1000 || one.Notifications != 200 {
		t.Errorf("webhook-1host: %d servers, %d subscribers, %d notifications; want 1, 1000, 200", one.Servers, one.Subscribers, one.Notifications)
	}
	each := webhookConfig(cfg, ScenarioWebhookEachHost)
	if each.Servers != 1000 || each.Subscribers != 1000 || each.Notifications != cfg.Notifications {
		t.Errorf("webhook-each-host: %d servers, %d subscribers; want 1000 each", each.Servers, each.Subscribers)
	}
	if four := webhookConfig(cfg, ScenarioWebhook); four.Servers != 4 || four.Subscribers != 1000 {
		t.Errorf("webhook: %d servers, %d subscribers; want 4 and 1000", four.Servers, four.Subscribers)
	}
	if wide := webhookConfig(cfg, ScenarioWebhookWide); wide.Subscribers != 10000 {
		t.Errorf("webhook-wide: %d subscribers, want 10000", wide.Subscribers)
	}
	cfg.Subscribers = 5000
	if each := webhookConfig(cfg, ScenarioWebhookEachHost); each.Servers != maxCallbackServers || each.Check() != nil {
		t.Errorf("webhook-each-host at 5,000 subscribers: %d servers (check: %v), want %d", each.Servers, each.Check(), maxCallbackServers)
	}
	for _, name := range []string{ScenarioWebhookOneHost, ScenarioWebhookEachHost} {
		if !slices.Contains(AllScenarios(), name) {
			t.Errorf("%s is not run by default", name)
		}
	}
}

func TestParseFlags_CeilingWorkers(t *testing.T) {
	cfg, _, err := ParseFlags([]string{"--ceiling-workers", "4, 128", "--one-host-notifications", "50"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.CeilingWorkers, []int{4, 128}) || cfg.OneHostNotifications != 50 {
		t.Errorf("ceiling workers %v, one-host notifications %d; want [4 128] and 50", cfg.CeilingWorkers, cfg.OneHostNotifications)
	}
	if cfg, _, _ := ParseFlags(nil, io.Discard); !slices.Equal(cfg.CeilingWorkers, []int{8, 16, 32, 64, 256}) {
		t.Errorf("default ceiling workers %v, want the issue's sweep", cfg.CeilingWorkers)
	}
	for _, bad := range []string{"", "8,x", "0", "8,5000"} {
		if _, _, err := ParseFlags([]string{"--ceiling-workers", bad}, io.Discard); err == nil {
			t.Errorf("--ceiling-workers %q accepted", bad)
		}
	}
}
