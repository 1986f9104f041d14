package bench

import (
	"context"
	"fmt"
	"math"
	"time"
)

// takeover kills the victim hub with SIGKILL, publishes one notification
// to every channel through hub 0 and measures when the subscriptions the
// victim delivered receive it, beside those of the live hubs.
func (b *clusterBench) takeover(ctx context.Context, life *clusterLife) ([]sample, error) {
	cfg, topo := b.cfg, life.topo
	subs := cfg.ClusterSubscriptions
	owned, err := activeDeliveries(ctx, topo.hubURLs[clusterVictim])
	if err != nil || len(owned) == 0 {
		// Without the victim's list, every subscription counts as its:
		// the last receipt is then the takeover's end all the same.
		b.lg.Warn("cluster: the victim's deliveries are unknown; takeover covers every subscription", "err", err, "active", len(owned))
		owned = nil
	}
	isVictims := func(i int) bool { return owned == nil || owned[life.ids[i]] }
	killAt := time.Since(b.recv.epoch)
	topo.hubs[clusterVictim].kill()
	round, err := life.pub.round(ctx, cfg.ClusterChannels)
	if err != nil {
		return nil, fmt.Errorf("cluster takeover: %w", err)
	}
	if _, err := b.recv.waitRound(ctx, 0, subs, round, cfg.ClusterClaimTTL+3*cfg.DurationCap); err != nil {
		return nil, fmt.Errorf("cluster takeover: %w", err)
	}
	doneAt := time.Since(b.recv.epoch)
	victim := spreadOf(b.recv, subs, round, isVictims, killAt)
	live := spreadOf(b.recv, subs, round, func(i int) bool { return !isVictims(i) }, killAt)
	pc := countPhase(b.recv, subs, killAt, doneAt, isVictims)
	b.lg.Info("cluster: takeover", "victim subscriptions", victim.N, "resumed", victim.First, "last", victim.Last, "live last", live.Last,
		"duplicates", pc.Dups, "at hub 1's subscriptions", pc.MovedDups)
	liveLast := math.NaN()
	if live.N > 0 {
		liveLast = live.Last.Seconds()
	}
	ttl := cfg.ClusterClaimTTL.Seconds()
	return []sample{
		{Name: "takeover: hub 1's subscriptions resumed", Unit: "s", Better: "lower", Target: &Target{Kind: TargetHubMax, Value: ttl},
			Hub: victim.First.Seconds(), Ceiling: ttl},
		{Name: "takeover: last of hub 1's subscriptions", Unit: "s", Better: "lower", Hub: victim.Last.Seconds(), Ceiling: liveLast},
		{Name: "takeover: subscriptions hub 1 delivered", Unit: "", Better: "info", Hub: float64(victim.N), Ceiling: float64(subs) / 3},
		{Name: "takeover: duplicate deliveries", Unit: "", Better: "lower", Hub: float64(pc.Dups), Ceiling: float64(victim.N)},
	}, nil
}

// join starts another hub while a steady stream of notifications is
// published, waits until the share it takes is stable, delivers one more
// round and counts the duplicates and receipts of the whole phase.
func (b *clusterBench) join(ctx context.Context, life *clusterLife, idle idleWork) ([]sample, error) {
	cfg, topo := b.cfg, life.topo
	subs := cfg.ClusterSubscriptions
	// About 1,000 deliveries a second offered while the hub joins.
	perChannel := (subs + cfg.ClusterChannels - 1) / cfg.ClusterChannels
	interval := max(20*time.Millisecond, time.Duration(perChannel)*time.Millisecond)
	before, err := owners(ctx, topo, []int{0, 2})
	if err != nil {
		return nil, err
	}
	c0, err := readRedisCounters(ctx, life.rdb)
	if err != nil {
		return nil, err
	}
	startAt := time.Since(b.recv.epoch)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, streamErr := make(chan struct{}), make(chan error, 1)
	go func() { streamErr <- life.pub.stream(sctx, stop, interval) }()
	joined, took, err := b.joinHub(ctx, topo)
	share := len(joined)
	close(stop)
	if serr := <-streamErr; err == nil && serr != nil {
		err = fmt.Errorf("cluster join stream: %w", serr)
	}
	if err != nil {
		return nil, err
	}
	c1, err := readRedisCounters(ctx, life.rdb)
	if err != nil {
		return nil, err
	}
	if _, err := b.deliverRound(ctx, life, subs, cfg.ClusterChannels, 3*cfg.DurationCap); err != nil {
		return nil, fmt.Errorf("cluster after join: %w", err)
	}
	after, err := owners(ctx, topo, []int{0, 2, clusterJoiner})
	if err != nil {
		return nil, err
	}
	moved := 0
	for _, id := range life.ids {
		if before.of(id) != after.of(id) {
			moved++
		}
	}
	pc := countPhase(b.recv, subs, startAt, time.Since(b.recv.epoch), func(i int) bool { return before.of(life.ids[i]) != after.of(life.ids[i]) })
	perDistinct := math.NaN()
	if pc.Receipts > pc.Dups {
		perDistinct = float64(pc.Receipts) / float64(pc.Receipts-pc.Dups)
	}
	// A moved subscription has at most one delivery in flight when its
	// old owner lets go: the hubs that gave shards up (the two that were
	// live) have at most their per-host maximum × callback servers
	// deliveries in flight.
	inFlight := min(moved, 2*cfg.perHostMax()*cfg.Servers)
	b.lg.Info("cluster: join", "took", share, "after", took, "moved", moved, "receipts", pc.Receipts, "duplicates", pc.Dups,
		"at moved subscriptions", pc.MovedDups, "in-flight bound", inFlight)
	return []sample{
		{Name: "join: subscriptions the new hub took", Unit: "", Better: "info", Hub: float64(share), Ceiling: float64(subs) / 3},
		{Name: "join: subscriptions that changed hub", Unit: "", Better: "info", Hub: float64(moved), Ceiling: float64(share)},
		{Name: "join: duplicates at subscriptions that kept their hub", Unit: "", Better: "lower", Hub: float64(pc.Dups - pc.MovedDups), Ceiling: 0},
		{Name: "join: time until its share is stable", Unit: "s", Better: "lower", Hub: took.Seconds(), Ceiling: cfg.ClusterClaimTTL.Seconds()},
		{Name: "join: duplicate deliveries", Unit: "", Better: "lower", Hub: float64(pc.Dups), Ceiling: float64(inFlight)},
		{Name: "join: receipts per distinct delivery", Unit: "", Better: "lower", Hub: perDistinct, Ceiling: 1},
		{Name: "join: Redis commands/s", Unit: "1/s", Better: "info", Hub: rateBetween(c0, c1).commands, Ceiling: idle.commands},
	}, nil
}

// ownerMap is which hub delivers each subscription, by ID.
type ownerMap map[string]int

// of is the hub delivering subscription id, -1 for none.
func (o ownerMap) of(id string) int {
	if h, ok := o[id]; ok {
		return h
	}
	return -1
}

// owners returns which of the hubs numbered in hubs delivers each
// subscription, from their admin APIs.
func owners(ctx context.Context, topo *clusterTopology, hubs []int) (ownerMap, error) {
	out := ownerMap{}
	for _, h := range hubs {
		active, err := activeDeliveries(ctx, topo.hubURLs[h])
		if err != nil {
			return nil, fmt.Errorf("cluster owners: hub %d: %w", h, err)
		}
		for id := range active {
			out[id] = h
		}
	}
	return out, nil
}

// joinHub starts the joining hub and polls its active deliveries every
// reconcile period until the count is positive and unchanged for three
// polls, or three claim TTLs pass; it returns the subscriptions it then
// delivers and how long after the start it first had that many.
func (b *clusterBench) joinHub(ctx context.Context, topo *clusterTopology) (map[string]bool, time.Duration, error) {
	start := time.Now()
	if err := topo.startHub(ctx, clusterJoiner); err != nil {
		return nil, 0, fmt.Errorf("cluster join: %w", err)
	}
	deadline := start.Add(3 * b.cfg.ClusterClaimTTL)
	last, lastAt, same := -1, time.Duration(0), 0
	for {
		active, err := activeDeliveries(ctx, topo.hubURLs[clusterJoiner])
		if err != nil {
			return nil, 0, fmt.Errorf("cluster join: %w", err)
		}
		if n := len(active); n != last {
			last, lastAt, same = n, time.Since(start), 0
		} else {
			same++
		}
		if (last > 0 && same >= 3) || time.Now().After(deadline) {
			return active, lastAt, nil
		}
		if err := pause(ctx, clusterReconcile(b.cfg)); err != nil { // poll interval with a deadline
			return nil, 0, err
		}
	}
}
