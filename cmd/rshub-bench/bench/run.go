package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// scenario is one benchmark scenario set up once and measured Runs times.
type scenario interface {
	run(ctx context.Context) ([]sample, error)
	close()
}

// Run executes every scenario of cfg Runs times and returns the report.
// It prints the plan, with its estimate, and each scenario's start and end
// to progress. A scenario that fails is recorded in Report.Errors and the
// others still run; the returned error is only for ctx ending.
func Run(ctx context.Context, cfg Config, lg *slog.Logger, progress io.Writer) (*Report, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{Started: start, Settings: settings(cfg)}
	prog := newProgress(progress, Plan(cfg), time.Now)
	prog.begin(cfg.Runs)
	for k, name := range cfg.Scenarios {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prog.started(k)
		t0, errs := time.Now(), len(rep.Errors)
		runScenario(ctx, cfg, name, rep, lg)
		prog.ended(k, time.Since(t0), len(rep.Errors)-errs)
	}
	rep.finish()
	rep.Elapsed = time.Since(start).Round(100 * time.Millisecond).String()
	return rep, ctx.Err()
}

// runScenario sets scenario name up, runs it cfg.Runs times into rep and
// closes it.
func runScenario(ctx context.Context, cfg Config, name string, rep *Report, lg *slog.Logger) {
	lg.Info("scenario: setting up", "scenario", name)
	sc, notes, err := setUp(ctx, name, cfg, lg)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", name, err))
		return
	}
	defer sc.close()
	rep.Notes = append(rep.Notes, notes...)
	for r := range cfg.Runs {
		t0 := time.Now()
		samples, err := sc.run(ctx)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s run %d: %v", name, r+1, err))
			if ctx.Err() != nil {
				return
			}
			continue
		}
		rep.add(name, samples)
		lg.Info("scenario: run done", "scenario", name, "run", r+1, "took", time.Since(t0).Round(time.Millisecond))
	}
}

func setUp(ctx context.Context, name string, cfg Config, lg *slog.Logger) (scenario, []string, error) {
	switch name {
	case ScenarioWebhook:
		b, err := newWebhookBench(ctx, cfg, lg)
		return b, webhookNotes(cfg), err
	case ScenarioWebSocket:
		b, err := newWSBench(ctx, cfg, lg)
		return b, wsNotes(cfg), err
	case ScenarioSSE:
		b, err := newSSEBench(ctx, cfg, lg)
		return b, sseNotes(cfg), err
	case ScenarioNATS:
		b, err := newNATSBench(ctx, cfg, lg)
		return b, natsNotes(), err
	case ScenarioCatchUp:
		b, err := newCatchUpBench(ctx, cfg, lg)
		return b, catchUpNotes(cfg), err
	case ScenarioWebhookWide, ScenarioWebhookOneHost, ScenarioWebhookEachHost:
		b, err := newWebhookBench(ctx, webhookConfig(cfg, name), lg)
		if name == ScenarioWebhookWide {
			return b, wideNotes(cfg), err
		}
		return b, webhookNotes(webhookConfig(cfg, name))[:1], err // the webhook scenario's notes say the rest
	case ScenarioScale:
		b, err := newScaleBench(ctx, cfg, lg)
		return b, scaleNotes(cfg), err
	case ScenarioSubscribeMemory:
		b, err := newSubMemBench(ctx, cfg, lg)
		return b, subMemNotes(cfg), err
	case ScenarioCluster:
		b, err := newClusterBench(ctx, cfg, lg)
		return b, clusterNotes(cfg), err
	}
	return nil, nil, fmt.Errorf("unknown scenario %q", name)
}

// webhookConfig is the configuration the webhook bench runs with for
// scenario name: webhook-wide has --wide-subscribers, webhook-1host every
// callback on one host and --one-host-notifications, webhook-each-host a
// host per callback (over at most 1,000 hosts); webhook runs cfg as it is.
func webhookConfig(cfg Config, name string) Config {
	switch name {
	case ScenarioWebhookWide:
		cfg.Subscribers = cfg.WideSubscribers
	case ScenarioWebhookOneHost:
		cfg.Servers, cfg.Notifications = 1, cfg.OneHostNotifications
	case ScenarioWebhookEachHost:
		cfg.Servers = min(cfg.Subscribers, maxCallbackServers)
	}
	return cfg
}

func settings(cfg Config) map[string]string {
	return map[string]string{
		"runs":             strconv.Itoa(cfg.Runs),
		"scenarios":        strings.Join(cfg.Scenarios, ","),
		"subscribers":      strconv.Itoa(cfg.Subscribers),
		"callback-servers": strconv.Itoa(cfg.Servers),
		"per-host":         strconv.Itoa(cfg.PerHost),
		"concurrency":      strconv.Itoa(cfg.concurrency()),
		"clients":          strconv.Itoa(cfg.Clients),
		"notifications":    strconv.Itoa(cfg.Notifications),
		"one-host":         strconv.Itoa(cfg.OneHostNotifications) + " notifications",
		"ceiling-workers":  joinInts(cfg.CeilingWorkers),
		"ping":             cfg.Ping,
		"nats-messages":    strconv.Itoa(cfg.NATSMessages),
		"catchup":          fmt.Sprintf("%d notifications, %d resources", cfg.CatchUpNotifications, cfg.CatchUpResources),
		"duration-cap":     cfg.DurationCap.String(),
		"wide-subscribers": strconv.Itoa(cfg.WideSubscribers),
		"scale":            fmt.Sprintf("%d subscriptions, %d channels, %d notifications at %d/s", cfg.ScaleSubscribers, cfg.ScaleChannels, cfg.ScaleNotifications, cfg.ScaleRate),
		"cluster":          fmt.Sprintf("%d subscriptions, %d channels, claim TTL %v", cfg.ClusterSubscriptions, cfg.ClusterChannels, cfg.ClusterClaimTTL),
		"subscribe-memory": fmt.Sprintf("%d subscriptions, %d channels, read %v after", cfg.MemSubscriptions, cfg.MemChannels, cfg.MemWait),
		"quick":            strconv.FormatBool(cfg.Quick),
		"cpus":             strconv.Itoa(runtime.NumCPU()),
		"go":               runtime.Version(),
	}
}

func webhookNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("webhook (%d notifications, %s pings): %d subscribers of one channel on %d loopback callback servers; hub per-host %d, so at most %d deliveries in flight; the ceiling is the fastest of plain senders of %s keep-alive net/http workers living for the whole run, each measured at full speed in every run, POSTing the same bodies, each notification to every callback before the next; the fastest also runs the half-rate phase",
			cfg.Notifications, cfg.Ping, cfg.Subscribers, cfg.Servers, cfg.PerHost, cfg.concurrency(), joinInts(sweepSizes(cfg))),
		"webhook: deliveries/s = distinct (subscriber, notification) receipts / (last receipt − first publish sent); latency = receipt at the callback − publish sent (hub: before the fat-ping POST, or before the notification is put on the loopback Source and the thin ping POSTed, which the hub answers once it fetched and stored it; ceiling: before its POSTs are queued)",
		"webhook: 'at 50% rate' publishes at half of this run's hub deliveries/s (notifications/s = that / subscribers), hub and ceiling alike",
		"webhook: CPU per delivery = CPU time of this whole process (hub or ceiling, callback servers, publisher) from the first send to the last receipt / receipts",
	}
}

// WriteReport prints rep as a table, or as JSON when asJSON.
func WriteReport(w io.Writer, rep *Report, asJSON bool) error {
	if asJSON {
		return rep.WriteJSON(w)
	}
	return rep.WriteTable(w)
}
