package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"time"
)

// subMemWorkers is the number of concurrent subscribe forms of the
// subscribe-memory scenario.
const subMemWorkers = 16

// subMemBench is the subscribe-memory scenario: per run a fresh hub child
// process with MemChannels hosted open channels seeded into its store
// takes MemSubscriptions subscriptions through its subscribe form, spread
// evenly over the channels, verifies them with GETs to loopback
// callbacks, and its RSS is read from outside (/proc) MemWait after the
// last queue is delivering, as a skeptic would measure it, beside the same
// hub's RSS MemWait after it served with no subscription.
type subMemBench struct {
	cfg  Config
	lg   *slog.Logger
	cbs  *callbacks
	runs int
}

func newSubMemBench(_ context.Context, cfg Config, lg *slog.Logger) (*subMemBench, error) {
	cbs, err := startCallbacks(cfg.Servers, cfg.MemChannels)
	if err != nil {
		return nil, err
	}
	return &subMemBench{cfg: cfg, lg: lg, cbs: cbs}, nil
}

func (b *subMemBench) close() { b.cbs.close() }

// subMemVerifyTail bounds the wait for every queue to be active once every
// subscribe form was accepted (unless --duration-cap is longer).
const subMemVerifyTail = 5 * time.Minute

// subMemLimit bounds one run's subscribing and verifying: the larger of
// --duration-cap and 20 subscriptions a second.
func subMemLimit(cfg Config) time.Duration {
	return max(cfg.DurationCap, time.Duration(cfg.MemSubscriptions/20)*time.Second)
}

// run starts a hub child on a store seeded with the channels, measures it
// empty, subscribes and verifies every subscription, measures it again and
// stops it.
func (b *subMemBench) run(ctx context.Context) ([]sample, error) {
	b.runs++
	dir, err := os.MkdirTemp("", "rshub-bench-submem-*")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	plan := seedPlan{Origin: fmt.Sprintf("http://127.0.0.1:%d", port), Channels: b.cfg.MemChannels}
	if err := seedStore(ctx, dir, plan); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	hc := benchHubConfig(dir, newToken(), "off", hubOptions{PerHost: b.cfg.PerHost})
	hc.GC = b.cfg.HubGC
	hc.Listen, hc.Demo = fmt.Sprintf("127.0.0.1:%d", port), false
	h, err := startHubChild(ctx, b.cfg, hc, dir, b.lg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	r := &subMemRun{h: h, hc: hc, plan: plan}
	defer func() { r.h.close() }() // removes dir
	if err := sleepCtx(ctx, b.cfg.MemWait); err != nil {
		return nil, err
	}
	rss0 := procRSS(h.pid())
	r.rss0 = rss0
	if err := b.heapProfile(ctx, h, "before"); err != nil {
		return nil, err
	}
	settled0, m0, err := h.settle(ctx)
	if err != nil {
		return nil, err
	}
	n := b.cfg.MemSubscriptions
	t0 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, subMemLimit(b.cfg))
	defer cancel()
	client := &http.Client{Timeout: 30 * time.Second}
	err = parallelN(sctx, subMemWorkers, n, func(ctx context.Context, i int) error {
		if err := subscribeForm(ctx, client, h.URL, plan.topic(i%plan.Channels), b.cbs.url(i)); err != nil {
			return fmt.Errorf("subscribe %d: %w", i, err)
		}
		return nil
	})
	if err == nil {
		// the forms are in: what is left is the verifications queued
		err = waitActiveQueues(sctx, h.URL, n, max(b.cfg.DurationCap, subMemVerifyTail))
	}
	if err != nil {
		return nil, fmt.Errorf("subscribe-memory: %d of %d verified (a verified subscription the hub failed to store is not active: see its log): %w", b.cbs.verified.Load(), n, err)
	}
	took := time.Since(t0)
	b.lg.Info("subscribe-memory: verified and delivering", "subscriptions", n, "took", took.Round(time.Millisecond))
	if err := sleepCtx(ctx, b.cfg.MemWait); err != nil {
		return nil, err
	}
	rss1 := procRSS(h.pid())
	if err := b.heapProfile(ctx, h, "after"); err != nil {
		return nil, err
	}
	settled1, m1, err := h.settle(ctx)
	if err != nil {
		return nil, err
	}
	// logged as read: a later failure (a restart) loses the run's samples
	b.lg.Info("subscribe-memory: RSS", "subscriptions", n, "before", rss0, "after", rss1, "per subscription", perConn(rss0, rss1, n),
		"settled per subscription", perConn(settled0, settled1, n), "heap+stack per subscription", perConn(m0.HeapStack, m1.HeapStack, n))
	wait := b.cfg.MemWait.String()
	out := []sample{
		{Name: "RSS per subscription " + wait + " after verification", Unit: "B", Better: "lower",
			Target: &Target{Kind: TargetHubMax, Value: 4096}, Hub: perConn(rss0, rss1, n), Ceiling: math.NaN()},
		{Name: "hub RSS " + wait + " after serving / after verification", Unit: "MiB", Better: "info", Hub: mib(rss1), Ceiling: mib(rss0)},
		{Name: "RSS per subscription, settled", Unit: "B", Better: "info", Hub: perConn(settled0, settled1, n), Ceiling: math.NaN()},
		{Name: "heap+stack per subscription, settled", Unit: "B", Better: "info", Hub: perConn(m0.HeapStack, m1.HeapStack, n), Ceiling: math.NaN()},
		{Name: "goroutines per subscription", Unit: "1", Better: "info", Hub: float64(m1.Goroutines-m0.Goroutines) / float64(n), Ceiling: math.NaN()},
		{Name: "subscriptions verified per second", Unit: "1/s", Better: "info", Hub: Rate(n, took), Ceiling: math.NaN()},
	}
	if !b.cfg.MemRestart {
		return out, nil
	}
	restarts, err := b.restarts(ctx, r)
	return append(out, restarts...), err
}

// heapProfile has h write a heap profile to
// --hub-heap-profile.submem.<run>.<when> when that flag is set.
func (b *subMemBench) heapProfile(ctx context.Context, h *hubChild, when string) error {
	if b.cfg.HubHeapProfile == "" {
		return nil
	}
	path := fmt.Sprintf("%s.submem.%d.%s", b.cfg.HubHeapProfile, b.runs, when)
	_, err := h.call(ctx, hubChildMsg{Op: "heap", Path: path}, time.Minute)
	return err
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func subMemNotes(cfg Config) []string {
	notes := []string{
		fmt.Sprintf("subscribe-memory: per run a fresh hub child process with %d open channels seeded into its store takes %d subscriptions through its subscribe form (%d at a time, spread evenly over the channels, callbacks on %d loopback servers) and verifies each with a GET; 'RSS per subscription %v after verification' = (VmRSS %v after every queue is delivering − VmRSS %v after the hub served with none) / subscriptions, read from /proc with no collection forced; 'settled' after runtime.GC in the child, less the free heap it keeps mapped",
			cfg.MemChannels, cfg.MemSubscriptions, subMemWorkers, cfg.Servers, cfg.MemWait, cfg.MemWait, cfg.MemWait),
	}
	if cfg.MemRestart {
		notes = append(notes, fmt.Sprintf("subscribe-memory --mem-restart: then the hub child is stopped (stdin closed: its clean shutdown) and started again on the same store, later killed with SIGKILL and started again; each time from the start: serving, its gauge %s reaching every subscription, and, publishing one notification to every channel once it does (%d publishers), every subscriber's receipt of its channel's; RSS per subscription %v after that sweep, against the first hub's with none",
			activeQueuesGauge, scaleSweepWorkers, cfg.MemWait))
	}
	return notes
}
