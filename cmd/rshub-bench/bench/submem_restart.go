package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/rshub/rshub/server"
)

// subMemStopLimit is how long a clean stop of the subscribe-memory hub
// child may take before it is killed (and the restart reported as after a
// kill).
const subMemStopLimit = 2 * time.Minute

// subMemRestartLimit bounds each wait of one restart measurement (every
// queue active, every receipt of the sweep): the larger of --duration-cap
// and 500 subscriptions a second.
func subMemRestartLimit(cfg Config) time.Duration {
	return max(cfg.DurationCap, time.Duration(cfg.MemSubscriptions/500)*time.Second)
}

// subMemRun is the hub child of one subscribe-memory run and what its
// restarts share: the store, the hub's configuration and the publisher
// of its channels.
type subMemRun struct {
	h    *hubChild
	hc   server.Config
	plan seedPlan
	rss0 uint64 // the first hub's RSS with no subscription
	pub  *channelPublisher
	// sweeps counts the sweeps, so that each has notification ids of its own
	sweeps int
}

// restarts measures --mem-restart: the hub child stopped cleanly and
// started again on the same store, then killed with SIGKILL and started
// again.
func (b *subMemBench) restarts(ctx context.Context, r *subMemRun) ([]sample, error) {
	r.pub = newChannelPublisher(r.h.URL, r.plan)
	var out []sample
	for _, kill := range []bool{false, true} {
		s, err := b.restart(ctx, r, kill)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// restart stops r.h (by SIGKILL when kill, else by closing its stdin, the
// hub's clean shutdown) and starts a hub child on the same store, and
// times from that start: the hub serving; its gauge counting every
// subscription's queue active; and, publishing one notification to every
// channel once it does, the last subscriber's receipt (and how many
// receipts repeated one or were of an earlier notification: redeliveries,
// which a kill may cause). Then, --mem-wait
// later, it reads the hub's RSS.
func (b *subMemBench) restart(ctx context.Context, r *subMemRun, kill bool) ([]sample, error) {
	old := r.h
	dir := old.dir
	old.dir = "" // the store outlives this child
	how, t0 := "a clean stop", time.Now()
	if kill {
		how = "kill -9"
		old.killNow()
	} else if old.stop(subMemStopLimit) {
		how = "a clean stop killed after " + subMemStopLimit.String()
	}
	stopped := time.Since(t0)
	t0 = time.Now()
	h, err := startHubChild(ctx, b.cfg, r.hc, dir, b.lg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("subscribe-memory: start after %s: %w", how, err)
	}
	r.h = h
	serving := time.Since(t0)
	n, limit := b.cfg.MemSubscriptions, subMemRestartLimit(b.cfg)
	if err := waitActiveQueues(ctx, h.URL, n, limit); err != nil {
		return nil, fmt.Errorf("subscribe-memory: after %s: %w", how, err)
	}
	active := time.Since(t0)
	t, first, err := b.sweep(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("subscribe-memory: after %s: %w", how, err)
	}
	b.lg.Info("subscribe-memory: restarted", "after", how, "stop", stopped.Round(time.Millisecond),
		"serving", serving.Round(time.Millisecond), "active", active.Round(time.Millisecond), "every receipt", t.Last.Sub(t0).Round(time.Millisecond))
	if err := sleepCtx(ctx, b.cfg.MemWait); err != nil {
		return nil, err
	}
	rss := procRSS(h.pid())
	b.lg.Info("subscribe-memory: RSS after the restart", "after", how, "rss", rss, "per subscription", perConn(r.rss0, rss, n))
	if err := b.heapProfile(ctx, h, "restart-"+map[bool]string{false: "stop", true: "kill"}[kill]); err != nil {
		return nil, err
	}
	pre := "after " + how + ": "
	return []sample{
		{Name: pre + "stop took", Unit: "s", Better: "info", Hub: stopped.Seconds(), Ceiling: math.NaN()},
		{Name: pre + "start → hub serving", Unit: "s", Better: "info", Hub: serving.Seconds(), Ceiling: math.NaN()},
		{Name: pre + "start → every queue active (hub's gauge)", Unit: "s", Better: "lower",
			Target: &Target{Kind: TargetHubMax, Value: 60}, Hub: active.Seconds(), Ceiling: math.NaN()},
		{Name: pre + "start → every subscriber received the sweep", Unit: "s", Better: "info", Hub: t.Last.Sub(t0).Seconds(), Ceiling: math.NaN()},
		{Name: pre + "receipts repeated or of an earlier notification", Unit: "1", Better: "info", Hub: float64(t.Dups + t.Stray), Ceiling: math.NaN()},
		{Name: pre + "sweep deliveries/s", Unit: "1/s", Better: "info", Hub: Rate(t.Count, t.Last.Sub(first)), Ceiling: math.NaN()},
		{Name: pre + "RSS per subscription " + b.cfg.MemWait.String() + " after the sweep", Unit: "B", Better: "info", Hub: perConn(r.rss0, rss, n), Ceiling: math.NaN()},
	}, nil
}

// sweep publishes one notification to every channel of r's hub, a few
// publishers at a time, and waits until every subscriber received its
// channel's and none another channel's; it returns the receipts and
// the first publish's send time.
func (b *subMemBench) sweep(ctx context.Context, r *subMemRun) (tally, time.Time, error) {
	r.sweeps++
	chans, base := b.cfg.MemChannels, r.sweeps*b.cfg.MemChannels
	rc := newReceipts(b.cfg.MemSubscriptions/chans, base, chans)
	wrong0, bad0 := b.cbs.wrong.Load(), b.cbs.bodyErrs.Load()
	b.cbs.measure(rc)
	defer b.cbs.measure(nil)
	var first time.Time
	err := parallelN(ctx, scaleSweepWorkers, chans, func(ctx context.Context, ch int) error {
		sent, err := r.pub.publish(ctx, ch, base+ch)
		if ch == 0 {
			first = sent
		}
		return err
	})
	if err == nil {
		err = rc.wait(ctx, subMemRestartLimit(b.cfg))
	}
	t := rc.tally()
	if w, bad := b.cbs.wrong.Load()-wrong0, b.cbs.bodyErrs.Load()-bad0; err == nil && w+bad > 0 {
		err = fmt.Errorf("%d notifications reached a subscriber of another channel, %d were unreadable", w, bad)
	}
	if err != nil {
		return t, first, fmt.Errorf("one notification to each of %d channels: %w", chans, err)
	}
	return t, first, nil
}
