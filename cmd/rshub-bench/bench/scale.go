package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"sync"
	"time"
)

// scaleSweepWorkers is the number of concurrent publishers of the sweep.
const scaleSweepWorkers = 4

// scaleBench is the many-channels scenario: a big hub child process with
// ScaleSubscribers webhook subscriptions over ScaleChannels channels
// (perChan each), beside two small ones, all delivering to the same
// loopback receivers:
//   - alike holds only as many channels as a fixed-rate measurement
//     publishes to (ScaleNotifications, perChan subscriptions each),
//     published the same way as the big hub's: each once, in the first
//     run never published before, in later runs once before (the big
//     hub's by the previous run's sweep). Its CPU per publish is the same channels' cost on an
//     otherwise empty hub, the reference of the big hub's.
//   - base holds one channel and its perChan subscriptions, published
//     ScaleNotifications times a run: the reference of the memory and idle
//     figures, and a cheaper one for CPU per publish (a subscription's
//     cursor and attempt writes are shared by the notifications of one
//     flush), shown beside it.
type scaleBench struct {
	cfg     Config
	lg      *slog.Logger
	perChan int
	rx      *scaleReceivers
	big     *scaleHub
	alike   *scaleHub
	base    *scaleHub
	nextID  int
	runs    int
}

// scaleHub is one hub child of the scale scenario with its publisher.
type scaleHub struct {
	*hubChild
	plan seedPlan
	subs int
	pub  *channelPublisher
}

func newScaleBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *scaleBench, err error) {
	b := &scaleBench{cfg: cfg, lg: lg, perChan: cfg.ScaleSubscribers / cfg.ScaleChannels}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.rx, err = startScaleReceivers(cfg.Servers, b.perChan); err != nil {
		return nil, err
	}
	if b.base, err = b.startHub(ctx, 1); err != nil {
		return nil, fmt.Errorf("baseline hub: %w", err)
	}
	if b.alike, err = b.startHub(ctx, min(cfg.ScaleNotifications, cfg.ScaleChannels)); err != nil {
		return nil, fmt.Errorf("hub of the measured channels: %w", err)
	}
	if b.big, err = b.startHub(ctx, cfg.ScaleChannels); err != nil {
		return nil, fmt.Errorf("big hub: %w", err)
	}
	return b, nil
}

// startHub seeds a data directory with channels channels of perChan
// subscriptions each, starts a hub child on it and waits until it runs a
// delivery queue for every subscription.
func (b *scaleBench) startHub(ctx context.Context, channels int) (_ *scaleHub, err error) {
	dir, err := os.MkdirTemp("", "rshub-bench-scale-*")
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	h := &scaleHub{subs: channels * b.perChan, plan: seedPlan{
		Origin: fmt.Sprintf("http://127.0.0.1:%d", port), Channels: channels, PerChan: b.perChan, Callback: b.rx.url,
	}}
	t0 := time.Now()
	if err := seedStore(ctx, dir, h.plan); err != nil {
		return nil, err
	}
	b.lg.Info("scale: store seeded", "channels", channels, "subscriptions", h.subs, "took", time.Since(t0).Round(time.Millisecond))
	token := newToken()
	hc := benchHubConfig(dir, token, "off", hubOptions{PerHost: b.cfg.PerHost})
	hc.GC = b.cfg.HubGC
	hc.Listen, hc.Demo = fmt.Sprintf("127.0.0.1:%d", port), false
	if b.cfg.Verbose {
		hc.LogLevel = "info"
	}
	t0 = time.Now()
	if h.hubChild, err = startHubChild(ctx, b.cfg, hc, dir, b.lg); err != nil {
		return nil, err
	}
	h.pub = newChannelPublisher(h.URL, h.plan)
	if err := waitActiveQueues(ctx, h.URL, h.subs, b.cfg.DurationCap); err != nil {
		h.close()
		return nil, err
	}
	b.lg.Info("scale: hub delivering", "subscriptions", h.subs, "took", time.Since(t0).Round(time.Millisecond))
	return h, nil
}

func (b *scaleBench) close() {
	var wg sync.WaitGroup // each hub child takes a second or two to stop
	for _, h := range []*scaleHub{b.big, b.alike, b.base} {
		if h != nil {
			wg.Go(h.close)
		}
	}
	wg.Wait()
	if b.rx != nil {
		b.rx.close()
	}
}

// scaleFixed is one fixed-rate measurement of one hub.
type scaleFixed struct {
	t   tally
	cpu time.Duration // hub CPU from before the first publish to the last receipt
}

// run measures once: settled memory and idle CPU of the big and the base
// hub, the fixed-rate measurement on all three (taking turns going
// first), then a sweep publishing once to every channel of the big hub and
// its memory after.
func (b *scaleBench) run(ctx context.Context) ([]sample, error) {
	b.runs++
	rssBig, mBig, err := b.big.settle(ctx)
	if err != nil {
		return nil, err
	}
	if b.cfg.HubHeapProfile != "" {
		path := fmt.Sprintf("%s.%d", b.cfg.HubHeapProfile, b.runs)
		if _, err := b.big.call(ctx, hubChildMsg{Op: "heap", Path: path}, time.Minute); err != nil {
			return nil, err
		}
	}
	rssBase, mBase, err := b.base.settle(ctx)
	if err != nil {
		return nil, err
	}
	idleBig, err := b.idleCPU(ctx, b.big)
	if err != nil {
		return nil, err
	}
	idleBase, err := b.idleCPU(ctx, b.base)
	if err != nil {
		return nil, err
	}
	fixed := map[*scaleHub]scaleFixed{}
	turns := []*scaleHub{b.big, b.alike, b.base}
	for i := range turns {
		h := turns[(i+b.runs)%len(turns)]
		if fixed[h], err = b.fixedRate(ctx, h); err != nil {
			return nil, err
		}
	}
	fixBig, fixAlike, fixBase := fixed[b.big], fixed[b.alike], fixed[b.base]
	sweep, err := b.sweep(ctx)
	if err != nil {
		return nil, err
	}
	rssSwept, _, err := b.big.settle(ctx)
	if err != nil {
		return nil, err
	}
	rssBaseAfter, _, err := b.base.settle(ctx)
	if err != nil {
		return nil, err
	}
	n := float64(b.cfg.ScaleNotifications)
	extra := b.big.subs - b.base.subs
	ratio12 := &Target{Kind: TargetRatioMax, Value: 1.2}
	return []sample{
		{Name: "hub CPU per publish", Unit: "ms", Better: "lower", Target: ratio12, Hub: ms(fixBig.cpu) / n, Ceiling: ms(fixAlike.cpu) / n},
		{Name: "p50 publish→receipt", Unit: "ms", Better: "lower", Hub: ms(fixBig.t.Latency.P50), Ceiling: ms(fixAlike.t.Latency.P50)},
		{Name: "p99 publish→receipt", Unit: "ms", Better: "lower", Target: ratio12, Hub: ms(fixBig.t.Latency.P99), Ceiling: ms(fixAlike.t.Latency.P99)},
		{Name: "CPU per publish, one channel republished", Unit: "ms", Better: "info", Hub: ms(fixBig.cpu) / n, Ceiling: ms(fixBase.cpu) / n},
		{Name: "idle hub CPU", Unit: "ms/s", Better: "lower", Hub: idleBig.cpu, Ceiling: idleBase.cpu},
		{Name: "collections in the idle window", Unit: "1", Better: "info", Hub: float64(idleBig.gcs), Ceiling: float64(idleBase.gcs)},
		{Name: "CPU of one full collection", Unit: "ms", Better: "info", Hub: gcMs(mBig), Ceiling: gcMs(mBase)},
		{Name: "idle CPU with the periodic collection", Unit: "ms/s", Better: "lower",
			Hub: idleBig.withPeriodicGC(mBig), Ceiling: idleBase.withPeriodicGC(mBase)},
		{Name: "hub RSS before publishing", Unit: "MiB", Better: "info", Hub: mib(rssBig), Ceiling: mib(rssBase)},
		{Name: "RSS per extra subscription", Unit: "B", Better: "info", Hub: perConn(rssBase, rssBig, extra), Ceiling: math.NaN()},
		{Name: "heap+stack per extra subscription", Unit: "B", Better: "info", Hub: perConn(mBase.HeapStack, mBig.HeapStack, extra), Ceiling: math.NaN()},
		{Name: "goroutines per extra subscription", Unit: "1", Better: "info", Hub: float64(mBig.Goroutines-mBase.Goroutines) / float64(max(extra, 1)), Ceiling: math.NaN()},
		{Name: "hub RSS after a publish to every channel", Unit: "MiB", Better: "info", Hub: mib(rssSwept), Ceiling: mib(rssBaseAfter)},
		{Name: "sweep deliveries/s", Unit: "1/s", Better: "info", Hub: sweep, Ceiling: math.NaN()},
	}, nil
}

// Settling before the idle window: a hub that has just started (a first
// sweep of every shard, queues reading their cursors) or just delivered is
// not idle yet. The window starts once h used under scaleQuietCPU of a
// core over scaleQuietSample scaleQuietRuns times in a row, or after
// scaleQuietMax, whichever comes first; the window itself is measured as
// it comes.
const (
	scaleQuietCPU    = 0.05
	scaleQuietSample = time.Second
	scaleQuietRuns   = 3
	scaleQuietMax    = 2 * time.Minute
)

// quiet waits until h has settled (see scaleQuietCPU).
func (b *scaleBench) quiet(ctx context.Context, h *scaleHub) error {
	if b.cfg.Quick {
		return nil
	}
	start := time.Now()
	for runs := 0; runs < scaleQuietRuns && time.Since(start) < scaleQuietMax; {
		c0, err := h.cpu()
		if err != nil {
			return err
		}
		if err := pause(ctx, scaleQuietSample); err != nil {
			return err
		}
		c1, err := h.cpu()
		if err != nil {
			return err
		}
		if runs++; (c1 - c0).Seconds() >= scaleQuietCPU*scaleQuietSample.Seconds() {
			runs = 0
		}
	}
	b.lg.Info("scale: hub settled", "subscriptions", h.subs, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// idleCPU returns h's CPU time per second of wall time while nothing is
// published, in milliseconds per second, once it has settled.
func (b *scaleBench) idleCPU(ctx context.Context, h *scaleHub) (idle, error) {
	window := b.cfg.ScaleIdle
	if err := b.quiet(ctx, h); err != nil {
		return idle{}, err
	}
	g0, err := h.call(ctx, hubChildMsg{Op: "gcs"}, time.Minute)
	if err != nil {
		return idle{}, err
	}
	c0, err := h.cpu()
	if err != nil {
		return idle{}, err
	}
	t0 := time.Now()
	if b.cfg.HubIdleProfile != "" && h == b.big {
		// The child spends the window writing the profile.
		path := fmt.Sprintf("%s.%d", b.cfg.HubIdleProfile, b.runs)
		if _, err := h.call(ctx, hubChildMsg{Op: "profile", Path: path, Ms: window.Milliseconds()}, window+time.Minute); err != nil {
			return idle{}, err
		}
	} else if err := pause(ctx, window); err != nil {
		return idle{}, err
	}
	c1, err := h.cpu()
	if err != nil {
		return idle{}, err
	}
	took := time.Since(t0)
	g1, err := h.call(ctx, hubChildMsg{Op: "gcs"}, time.Minute)
	if err != nil {
		return idle{}, err
	}
	return idle{cpu: ms(c1-c0) / took.Seconds(), gcs: g1.GCs - g0.GCs, window: took}, nil
}

// idle is what one idle window of a hub measured.
type idle struct {
	cpu    float64 // ms of CPU per second
	gcs    uint32  // collections the hub child made in it
	window time.Duration
}

// withPeriodicGC is the idle CPU, in ms/s, with the runtime's collection
// every forcedGCPeriod of a hub child that settled as m: none added when
// the child's hub stops that collection while idle (--gc heap), or when
// the window was long enough to hold one, whose cost it measured.
func (i idle) withPeriodicGC(m hubChildMsg) float64 {
	if !m.PeriodicGC || i.window >= forcedGCPeriod {
		return i.cpu
	}
	return i.cpu + gcMs(m)/forcedGCPeriod.Seconds()
}

// fixedRate publishes ScaleNotifications notifications at ScaleRate per
// second, each to another channel of h (in the first run, channels never
// published to; later, channels published to once before: on the big hub
// by the previous run's sweep; the base hub has only its one channel), and measures publish→receipt and the hub's CPU
// time until the last receipt.
func (b *scaleBench) fixedRate(ctx context.Context, h *scaleHub) (scaleFixed, error) {
	n := b.cfg.ScaleNotifications
	chans := make([]int, n)
	for k := range chans {
		chans[k] = ((b.runs-1)*n + k) % h.plan.Channels
	}
	base := b.nextID
	b.nextID += n
	if b.cfg.HubPublishProfile != "" {
		which := map[*scaleHub]string{b.big: "big", b.alike: "alike", b.base: "base"}[h]
		path := fmt.Sprintf("%s.%s.%d", b.cfg.HubPublishProfile, which, b.runs)
		if _, err := h.call(ctx, hubChildMsg{Op: "profile-start", Path: path}, time.Minute); err != nil {
			return scaleFixed{}, err
		}
		defer func() { _, _ = h.call(ctx, hubChildMsg{Op: "profile-stop"}, time.Minute) }()
	}
	c0, err := h.cpu()
	if err != nil {
		return scaleFixed{}, err
	}
	t, _, err := b.rx.measure(ctx, base, chans, time.Second/time.Duration(b.cfg.ScaleRate), 1, b.cfg.DurationCap, h.pub.publish)
	if err != nil {
		return scaleFixed{}, fmt.Errorf("scale: fixed rate on the %d-subscription hub: %w", h.subs, err)
	}
	c1, err := h.cpu()
	if err != nil {
		return scaleFixed{}, err
	}
	return scaleFixed{t: t, cpu: c1 - c0}, nil
}

// sweep publishes one notification to every channel of the big hub, back
// to back by a few concurrent publishers, waits for every subscription to
// receive its one, and returns the deliveries per second.
func (b *scaleBench) sweep(ctx context.Context) (float64, error) {
	chans := make([]int, b.big.plan.Channels)
	for k := range chans {
		chans[k] = k
	}
	base := b.nextID
	b.nextID += len(chans)
	t, first, err := b.rx.measure(ctx, base, chans, 0, scaleSweepWorkers, b.cfg.DurationCap, b.big.pub.publish)
	if err != nil {
		return 0, fmt.Errorf("scale: publish to every channel: %w", err)
	}
	return Rate(t.Count, t.Last.Sub(first)), nil
}

// forcedGCPeriod is how often the Go runtime collects a process that did
// not collect meanwhile (runtime.forcegcperiod): an idle hub's heap is
// marked this often however little it allocates, which a short idle
// window seldom holds.
const forcedGCPeriod = 2 * time.Minute

// gcMs is the CPU time of the full collection of a settle, in ms.
func gcMs(m hubChildMsg) float64 { return float64(m.GCMicros) / 1000 }

// mib converts bytes to MiB.
func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// channelPublisher publishes fat pings to the seeded channels of one hub,
// keeping each channel's Source time continuous. Concurrent publishes must
// be to distinct channels.
type channelPublisher struct {
	client *http.Client
	hubURL string
	plan   seedPlan
	next   []time.Time // from of each channel's next notification
}

func newChannelPublisher(hubURL string, plan seedPlan) *channelPublisher {
	p := &channelPublisher{
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: scaleSweepWorkers}},
		hubURL: hubURL, plan: plan, next: make([]time.Time, plan.Channels),
	}
	for c := range p.next {
		p.next[c] = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return p
}

// publish sends notification id to channel ch and returns its send time.
func (p *channelPublisher) publish(ctx context.Context, ch, id int) (time.Time, error) {
	sent, err := publishFatPing(ctx, p.client, p.hubURL, topicLink(p.hubURL, p.plan.topic(ch)), id, p.next[ch])
	if err == nil {
		p.next[ch] = p.next[ch].Add(time.Second)
	}
	return sent, err
}

func wideNotes(cfg Config) []string {
	return []string{fmt.Sprintf("webhook-wide: the webhook scenario with %d subscribers of one channel (--wide-subscribers), same concurrency and ceiling", cfg.WideSubscribers)}
}

func scaleNotes(cfg Config) []string {
	per := cfg.ScaleSubscribers / cfg.ScaleChannels
	return []string{
		fmt.Sprintf("scale: hub = a hub child process with %d webhook subscriptions over %d channels (%d each); ceiling of CPU per publish and publish→receipt = a hub child process holding only as many channels as one of those measurements publishes to (%d, %d subscriptions each), published the same way; ceiling of the other figures = a hub child process with one channel and its %d subscriptions; all deliver to the same %d loopback callback servers",
			cfg.ScaleSubscribers, cfg.ScaleChannels, per, min(cfg.ScaleNotifications, cfg.ScaleChannels), per, per, cfg.Servers),
		"scale: channels and active subscriptions are written into each hub's JetStream KV store before it starts (as a restarted hub finds them), not through subscribe forms and verification",
		fmt.Sprintf("scale: %d notifications at %d/s, each to another channel (in the first run, channels never published to; in later runs, channels published to once before, on the big hub by the previous run's sweep; the one-channel hub: to its channel each time, so that its subscriptions' cursor and attempt writes are shared by the notifications of one flush: 'one channel republished'); CPU = the hub process's utime+stime from the first publish to the last receipt, divided by the notifications, idle work included", cfg.ScaleNotifications, cfg.ScaleRate),
		"scale: RSS after runtime.GC in the hub process, less the free heap it keeps mapped (HeapIdle − HeapReleased; the heap is not released, so that later measurements do not pay page faults a running hub never pays); 'per extra subscription' = (hub − ceiling) / (subscriptions − " + fmt.Sprint(per) + "); later runs measure it after the previous run's publishes",
		"scale: idle CPU over a window that starts once the hub has settled (under 5 % of a core for 3 s in a row, at most 2 min: a hub that just started or delivered is not idle yet)",
		"scale: 'CPU of one full collection' = the hub process's CPU time over the runtime.GC of its settle; 'idle CPU with the periodic collection' adds that cost spread over 2 min, as often as the Go runtime collects a process that has not collected otherwise, to a hub paced by the runtime (--hub-gc runtime) when the idle window (--scale-idle) is too short to hold one; a hub with --gc heap (the default) stops that collection once it has been idle for a minute, and adds nothing (a --scale-idle over 2m shows it: collections in the idle window)",
	}
}
