package bench

import (
	"fmt"
	"math"
	"time"
)

// Reference costs of the work the scenarios do, on the 2-core development
// machine the README's figures come from. The estimates multiply them by
// the configured counts; the configured durations (--duration-cap, the
// fixed-rate and idle windows, --cluster-idle, --cluster-claim-ttl) enter
// as they are and bound each phase as they bound the run.
const (
	refHubStart      = time.Second            // start and stop of one hub
	refServersStart  = 100 * time.Millisecond // loopback callback servers up
	refSettle        = 300 * time.Millisecond // one settle call of a hub child (GC, memory read)
	refClusterBuild  = 30 * time.Second       // go build of cmd/hub and nats-server (cached)
	refClusterStart  = 10 * time.Second       // 3 nats-server, redis-server and 3 hubs up
	refSubscribeRate = 330.0                  // subscribe forms verified per second
	refDeliveryRate  = 15000.0                // webhook deliveries per second (hub and raw net/http)
	refFrameRate     = 140000.0               // WebSocket frames or SSE events per second
	refConnectRate   = 2000.0                 // WebSocket or SSE connections opened per second
	refPublishRate   = 1500.0                 // closed-loop publishes per second, each waiting for its answer
	refSeedRate      = 2000.0                 // subscriptions per second seeded into a store and started by a hub
	refRedisSeedRate = 20000.0                // subscriptions per second written into Redis
	refCatchUpRate   = 20000.0                // one-by-one catch-up POSTs per second
)

// Estimate is how long one scenario is expected to take: Setup once, then
// PerRun for each of Runs.
type Estimate struct {
	Scenario string
	Setup    time.Duration
	PerRun   time.Duration
	Runs     int
}

// Total is the scenario's whole expected duration.
func (e Estimate) Total() time.Duration { return e.Setup + time.Duration(e.Runs)*e.PerRun }

// Plan returns the estimate of every scenario of cfg, in the order they
// run.
func Plan(cfg Config) []Estimate {
	out := make([]Estimate, len(cfg.Scenarios))
	for i, name := range cfg.Scenarios {
		setup, perRun := estimate(cfg, name)
		out[i] = Estimate{Scenario: name, Setup: setup, PerRun: perRun, Runs: cfg.Runs}
	}
	return out
}

// PlanTotal is the sum of the estimates of plan.
func PlanTotal(plan []Estimate) time.Duration {
	var sum time.Duration
	for _, e := range plan {
		sum += e.Total()
	}
	return sum
}

// work is the time to do n units at rate per second, at most limit (the
// bound the scenario puts on that wait; 0 for none).
func work(n int, rate float64, limit time.Duration) time.Duration {
	d := time.Duration(float64(n) / rate * float64(time.Second))
	if limit > 0 && d > limit {
		return limit
	}
	return d
}

// estimate returns the setup and per-run durations of scenario name,
// following the phases of its run method.
func estimate(cfg Config, name string) (setup, perRun time.Duration) {
	capd := cfg.DurationCap
	switch name {
	case ScenarioWebhook, ScenarioWebhookWide, ScenarioWebhookOneHost, ScenarioWebhookEachHost:
		wc := webhookConfig(cfg, name)
		subs := wc.Subscribers
		// Hub and every sender of the sweep at full speed, then the hub
		// and the fastest sender at half the rate: half the notifications
		// at half the rate take as long, at most half of --duration-cap
		// (halfRate).
		full := work(wc.Notifications*subs, refDeliveryRate, capd)
		senders := time.Duration(len(sweepSizes(wc)))
		return refHubStart + work(subs, refSubscribeRate, 0), (1+senders)*full + 2*min(full, capd/2)
	case ScenarioWebSocket, ScenarioSSE:
		// Hub, then ceiling: connect, fan out (websocket: also at half
		// rate), disconnect.
		connect := work(cfg.Clients, refConnectRate, capd)
		full := work(cfg.Notifications*cfg.Clients, refFrameRate, capd)
		half := min(full, capd/2)
		if name == ScenarioSSE {
			half = 0
		}
		return refHubStart, 2 * (2*connect + full + half)
	case ScenarioNATS:
		// Hub, HTTP→JetStream and JetStream closed-loop; core NATS is
		// far faster.
		return refHubStart, 3 * work(cfg.NATSMessages, refPublishRate, capd)
	case ScenarioCatchUp:
		return refHubStart, work(cfg.CatchUpNotifications, refPublishRate, 0) + work(cfg.CatchUpNotifications, refCatchUpRate, capd)
	case ScenarioScale:
		return scaleEstimate(cfg)
	case ScenarioSubscribeMemory:
		// per run: a hub seeded with the channels and started, two waits,
		// two settles, the subscriptions verified (at most subMemLimit);
		// with --mem-restart two restarts
		verify := work(cfg.MemSubscriptions, refSubscribeRate, subMemLimit(cfg))
		run := refHubStart + work(cfg.MemChannels, refSeedRate, 0) + 2*cfg.MemWait + 2*refSettle + verify
		if cfg.MemRestart {
			// two restarts, each a start, a sweep and a wait
			run += 2 * (refHubStart + work(cfg.MemSubscriptions, refDeliveryRate, subMemRestartLimit(cfg)) + cfg.MemWait)
		}
		return refServersStart, run
	case ScenarioCluster:
		return clusterEstimate(cfg)
	}
	return 0, 0
}

// scaleEstimate follows scaleBench: three hubs seeded and started; per
// run four settles, an idle window for two hubs after it is quiet, a
// fixed-rate measurement per hub and a sweep of every channel.
func scaleEstimate(cfg Config) (setup, perRun time.Duration) {
	perChan := cfg.ScaleSubscribers / max(cfg.ScaleChannels, 1)
	alike := min(cfg.ScaleNotifications, cfg.ScaleChannels) * perChan
	setup = 3*refHubStart + work(cfg.ScaleSubscribers+alike+perChan, refSeedRate, 0)
	idle := cfg.ScaleIdle + scaleQuietRuns*scaleQuietSample
	if cfg.Quick {
		idle = cfg.ScaleIdle
	}
	fixed := time.Duration(float64(cfg.ScaleNotifications) / float64(cfg.ScaleRate) * float64(time.Second))
	sweep := work(cfg.ScaleSubscribers, refDeliveryRate, cfg.DurationCap)
	return setup, 4*refSettle + 2*idle + 3*fixed + sweep
}

// clusterEstimate follows clusterBench: binaries built once; per run a
// fresh cluster, two idle measurements, seeding, activation, takeover and
// join, each round of deliveries bounded as the run bounds it.
func clusterEstimate(cfg Config) (setup, perRun time.Duration) {
	reconcile := clusterReconcile(cfg)
	idle := 3*reconcile + clusterSettleQuiet*clusterSettleSample + cfg.ClusterIdle
	round := work(cfg.ClusterSubscriptions, refDeliveryRate, 3*cfg.DurationCap)
	takeover := cfg.ClusterClaimTTL + round
	join := min(cfg.ClusterClaimTTL/2+3*reconcile, 3*cfg.ClusterClaimTTL) + round
	perRun = refClusterStart + 2*idle + work(cfg.ClusterSubscriptions, refRedisSeedRate, 0) + round + takeover + join
	return refClusterBuild, perRun
}

// about renders an estimate for a person: to the second under a minute,
// to ten seconds under ten minutes, else to the minute.
func about(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(math.Max(1, math.Round(d.Seconds()))))
	case d < 10*time.Minute:
		d = d.Round(10 * time.Second)
		if s := int(d.Seconds()) % 60; s != 0 {
			return fmt.Sprintf("%dm%02ds", int(d.Minutes()), s)
		}
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
}
