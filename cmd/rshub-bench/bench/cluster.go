package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterBaseline is the number of subscriptions of the idle baseline.
const clusterBaseline = 100

// clusterVictim is the hub killed with SIGKILL; clusterJoiner the one that
// joins afterwards.
const (
	clusterVictim = 1
	clusterJoiner = 3
)

// clusterBench is the cluster scenario: hub processes sharing three
// nats-server processes (a JetStream cluster) and one redis-server. Every
// run is a whole life of a fresh cluster: idle with clusterBaseline
// subscriptions, then with ClusterSubscriptions, one hub killed, one
// joining, and every acknowledged notification checked at every
// subscription.
type clusterBench struct {
	cfg  Config
	lg   *slog.Logger
	dir  string
	bins clusterBinaries
	recv *clusterLog
}

func newClusterBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *clusterBench, err error) {
	b := &clusterBench{cfg: cfg, lg: lg}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.dir, err = os.MkdirTemp("", "rshub-bench-cluster-*"); err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	t0 := time.Now()
	if b.bins, err = buildClusterBinaries(ctx, b.dir, cfg.ClusterSource); err != nil {
		return nil, err
	}
	lg.Info("cluster: binaries built", "took", time.Since(t0).Round(time.Millisecond))
	if b.recv, err = startClusterLog(b.cfg.Servers); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *clusterBench) close() {
	if b.recv != nil {
		b.recv.close()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

func clusterNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("cluster: 3 nats-server (JetStream cluster, replicas 3), 1 redis-server, 3 hub processes (--claim-ttl %v, --reconcile %v); %d subscriptions over %d channels seeded into Redis, callbacks on %d loopback servers; each run is a fresh cluster",
			cfg.ClusterClaimTTL, clusterReconcile(cfg), cfg.ClusterSubscriptions, cfg.ClusterChannels, cfg.Servers),
		fmt.Sprintf("cluster: idle Redis = INFO total_commands_processed and used_cpu delta over %v with the hubs idle (after a round is delivered, 3 reconcile periods and until the hubs use under 3 %% of a core in 3 successive seconds, at most 90 s); the hubs' CPU from /proc over the same window, their VmRSS summed at its end (per idle subscription: the growth from the baseline over the subscriptions added); hub = %d subscriptions, ceiling = the same cluster earlier with %d (the point: ratio ≈ 1)",
			cfg.ClusterIdle, cfg.ClusterSubscriptions, clusterBaseline),
		"cluster: takeover = hub 1 SIGKILLed, then one notification published to every channel through hub 0; receipt − kill at the subscriptions hub 1 delivered (its admin API's active queues); hub = hub 1's subscriptions, ceiling = the live hubs' (the same fan-out without a takeover), resumed = the first of hub 1's",
		"cluster: join = hub 3 started while a steady stream is published; its share = its active queues once unchanged for 3 reconcile periods; duplicates = repeated receipts in the join phase beside the in-flight bound (a moved subscription has at most one delivery in flight; the two hubs that gave shards up at most --per-host × --callback-servers each); moved = subscriptions whose hub (by the live hubs' admin APIs, before and after) changed; duplicates at subscriptions that kept their hub should be 0; receipts per distinct delivery above 1 would be a delivery storm",
		"cluster: delivered in order = subscriptions that got every acknowledged notification of their channel, first arrivals in publish order, over the whole life (kill and join included)",
	}
}

// clusterLife holds what one run measures as it goes.
type clusterLife struct {
	topo *clusterTopology
	rdb  *redis.Client
	pub  *clusterPublisher
	ids  []string // subscription IDs by index
}

// run starts a fresh cluster and measures its life.
func (b *clusterBench) run(ctx context.Context) (_ []sample, err error) {
	cfg := b.cfg
	subs, nch := cfg.ClusterSubscriptions, cfg.ClusterChannels
	base := min(clusterBaseline, subs)
	chans := clusterChannels(nch)
	b.recv.reset(subs)
	topo, err := startClusterInfra(ctx, b.dir, b.bins, cfg, chans)
	if err != nil {
		return nil, err
	}
	defer topo.close()
	if cfg.Verbose {
		defer topo.logTails(b.lg)
	}
	opt, err := redis.ParseURL(topo.redisURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	life := &clusterLife{topo: topo, rdb: redis.NewClient(opt), pub: newClusterPublisher(topo.hubURLs[0], chans)}
	defer life.rdb.Close()

	// Baseline: clusterBaseline subscriptions, three hubs, one round.
	if life.ids, err = seedSubscriptions(ctx, topo.redisURL, chans, b.recv, 0, base, 0); err != nil {
		return nil, err
	}
	for i := range 3 {
		if err := topo.startHub(ctx, i); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	if _, err := b.deliverRound(ctx, life, base, min(base, nch), cfg.DurationCap); err != nil {
		return nil, fmt.Errorf("cluster baseline: %w", err)
	}
	idleBase, err := b.idle(ctx, life)
	if err != nil {
		return nil, err
	}
	b.lg.Info("cluster: baseline idle", "subscriptions", base, "redis commands/s", idleBase.commands)

	// Every subscription: seeded while the hubs run, from the log's end.
	lateID := int32(len(life.pub.published()))
	t0 := time.Now()
	more, err := seedSubscriptions(ctx, topo.redisURL, chans, b.recv, base, subs, life.pub.lastSeq()+1)
	if err != nil {
		return nil, err
	}
	life.ids = append(life.ids, more...)
	b.lg.Info("cluster: seeded", "subscriptions", subs, "took", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if _, err := b.deliverRound(ctx, life, subs, nch, 3*cfg.DurationCap); err != nil {
		return nil, fmt.Errorf("cluster activation: %w", err)
	}
	activation := time.Since(t0)
	b.lg.Info("cluster: every subscription delivering", "took", activation.Round(time.Millisecond))
	idleFull, err := b.idle(ctx, life)
	if err != nil {
		return nil, err
	}
	b.lg.Info("cluster: idle", "subscriptions", subs, "redis commands/s", idleFull.commands)

	take, err := b.takeover(ctx, life)
	if err != nil {
		return nil, err
	}
	join, err := b.join(ctx, life, idleFull)
	if err != nil {
		return nil, err
	}
	check := checkDelivery(b.recv, life.pub.published(), nch, subs, func(i int) int32 {
		if i < base {
			return 0
		}
		return lateID
	})
	b.lg.Info("cluster: checked", "complete", check.Complete, "missing", check.Missing, "unordered", check.Unordered)
	if err := check.err(); err != nil {
		return nil, err
	}
	out := []sample{
		{Name: "idle Redis commands/s", Unit: "1/s", Better: "lower", Hub: idleFull.commands, Ceiling: idleBase.commands},
		{Name: "idle Redis CPU", Unit: "%", Better: "lower", Hub: idleFull.cpu, Ceiling: idleBase.cpu},
		{Name: "idle CPU of the 3 hubs", Unit: "%", Better: "lower", Hub: idleFull.hubCPU, Ceiling: idleBase.hubCPU},
		{Name: "RSS of the 3 hubs", Unit: "MiB", Better: "info", Hub: float64(idleFull.hubRSS) / (1 << 20), Ceiling: float64(idleBase.hubRSS) / (1 << 20)},
		{Name: "hub RSS per idle subscription", Unit: "B", Better: "info", Hub: perConn(idleBase.hubRSS, idleFull.hubRSS, subs-base), Ceiling: math.NaN()},
		{Name: "activation of all subscriptions", Unit: "s", Better: "info", Hub: activation.Seconds(), Ceiling: math.NaN()},
	}
	out = append(out, take...)
	out = append(out, join...)
	return append(out, sample{Name: "delivered in order (subscriptions)", Unit: "%", Better: "higher",
		Target: &Target{Kind: TargetRatioMin, Value: 1}, Hub: 100 * float64(check.Complete) / float64(subs), Ceiling: 100}), nil
}

// deliverRound publishes one notification to each of the first n
// channels and waits until subscriptions [0, subs) on them received it.
func (b *clusterBench) deliverRound(ctx context.Context, life *clusterLife, subs, n int, limit time.Duration) ([]int, error) {
	round, err := life.pub.round(ctx, n)
	if err != nil {
		return nil, err
	}
	if _, err := b.recv.waitRound(ctx, 0, subs, round, limit); err != nil {
		return nil, err
	}
	return round, nil
}

// idleWork is the work of an idle cluster: Redis's and the hubs' CPU (in
// percent of one core, summed over the hub processes), and the hubs'
// resident memory (summed) at the end.
type idleWork struct {
	redisRate
	hubCPU float64
	hubRSS uint64
}

// Settling before an idle measurement: the hubs' CPU, summed, is sampled
// every clusterSettleSample until clusterSettleQuiet samples in a row are
// below clusterSettleCPU percent of one core, for at most
// clusterSettleMax (after a publish, the hubs keep working on each
// channel for a while).
const (
	clusterSettleCPU    = 3.0
	clusterSettleSample = time.Second
	clusterSettleQuiet  = 3
	clusterSettleMax    = 90 * time.Second
)

// idle waits until the hubs are quiet (at least three reconcile periods)
// and measures Redis's and the hubs' work over ClusterIdle.
func (b *clusterBench) idle(ctx context.Context, life *clusterLife) (idleWork, error) {
	start := time.Now()
	if err := pause(ctx, 3*clusterReconcile(b.cfg)); err != nil {
		return idleWork{}, err
	}
	for quiet := 0; ; {
		c0, err := life.topo.hubsCPU()
		if err != nil {
			return idleWork{}, err
		}
		if err := pause(ctx, clusterSettleSample); err != nil {
			return idleWork{}, err
		}
		c1, err := life.topo.hubsCPU()
		if err != nil {
			return idleWork{}, err
		}
		pct := 100 * (c1 - c0).Seconds() / clusterSettleSample.Seconds()
		if quiet++; pct >= clusterSettleCPU {
			quiet = 0
		}
		if quiet >= clusterSettleQuiet || time.Since(start) > clusterSettleMax {
			b.lg.Info("cluster: settled", "took", time.Since(start).Round(time.Millisecond), "hub CPU %", pct)
			break
		}
	}
	cpu0, err := life.topo.hubsCPU()
	if err != nil {
		return idleWork{}, err
	}
	t0 := time.Now()
	r, err := measureRedis(ctx, life.rdb, b.cfg.ClusterIdle)
	if err != nil {
		return idleWork{}, fmt.Errorf("cluster idle: %w", err)
	}
	cpu1, err := life.topo.hubsCPU()
	if err != nil {
		return idleWork{}, err
	}
	return idleWork{redisRate: r, hubCPU: 100 * (cpu1 - cpu0).Seconds() / time.Since(t0).Seconds(), hubRSS: life.topo.hubsRSS()}, nil
}
