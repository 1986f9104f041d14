package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// webhookBench is the webhook fan-out scenario: one hub, one channel, many
// loopback WebSub subscribers, against raw net/http POSTs of the same
// bodies at the same concurrency to the same callback servers.
type webhookBench struct {
	cfg Config
	lg  *slog.Logger
	hub *hubProc
	cbs *callbacks
	pub interface {
		publish(context.Context, int) (time.Time, error)
	}
	// topic is the channel's topic: the hub's demo channel with fat
	// pings, src's topic with thin ones
	topic  string
	src    *source
	raw    *http.Client
	nextID int
	runs   int
	// the ceiling: one plain sender per worker count of the sweep
	// (sweepSizes), fewest workers first
	pools []*senderPool
}

// rawJob is one POST of the ceiling.
type rawJob struct {
	callback int
	body     []byte
	link     string
	ctx      context.Context
}

// minCeilingWorkers is the least number of senders of the ceiling: a
// plain sender as people write one (a few dozen keep-alive net/http
// workers), or the hub's own concurrency when that is higher.
const minCeilingWorkers = 32

// ceilingWorkers is how many senders the ceiling ran before the sweep,
// one of the sweep's sizes now.
func ceilingWorkers(cfg Config) int { return max(minCeilingWorkers, cfg.concurrency()) }

func newWebhookBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *webhookBench, err error) {
	b := &webhookBench{cfg: cfg, lg: lg}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.cbs, err = startCallbacks(cfg.Servers, 0); err != nil {
		return nil, err
	}
	thin := cfg.Ping == PingThin
	if b.hub, err = startHub(ctx, hubOptions{PerHost: cfg.PerHost, Verbose: cfg.Verbose, OpenTopics: thin}, lg); err != nil {
		return nil, err
	}
	if b.pub, b.topic = newPublisher(b.hub), b.hub.Topic; thin {
		if b.src, err = startSource(); err != nil {
			return nil, err
		}
		tp := newThinPublisher(b.hub, b.src)
		// the first ping opens the channel (the hub's --open-topics)
		if _, err := tp.publish(ctx, -1); err != nil {
			return nil, fmt.Errorf("webhook: opening the thin-ping channel: %w", err)
		}
		b.pub, b.topic = tp, b.src.URL
	}
	sizes := sweepSizes(cfg)
	most := sizes[len(sizes)-1]
	// every sender keeps its connections: as many idle ones per callback
	// server as the largest sender has workers
	b.raw = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: most * cfg.Servers, MaxIdleConnsPerHost: most,
	}}
	for _, w := range sizes {
		b.pools = append(b.pools, startSenderPool(w, b.raw, b.cbs.url))
	}
	start := time.Now()
	if err := b.subscribeAll(ctx); err != nil {
		return nil, err
	}
	lg.Info("webhook: subscribers verified and active", "subscribers", cfg.Subscribers, "took", time.Since(start).Round(time.Millisecond))
	return b, nil
}

func (b *webhookBench) close() {
	for _, p := range b.pools {
		p.stop()
	}
	b.pools = nil
	if b.hub != nil {
		b.hub.close()
	}
	if b.cbs != nil {
		b.cbs.close()
	}
	if b.src != nil {
		b.src.close()
	}
}

// subscribeAll subscribes every callback through the hub's subscribe form
// and waits until the hub verified them and the delivery engine runs a
// queue for each.
func (b *webhookBench) subscribeAll(ctx context.Context) error {
	client := &http.Client{Timeout: 10 * time.Second}
	jobs := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := b.subscribe(ctx, client, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range b.cfg.Subscribers {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	if err := waitActiveQueues(ctx, b.hub.URL, b.cfg.Subscribers, b.cfg.DurationCap); err != nil {
		return fmt.Errorf("webhook: %d of %d subscriptions verified: %w", b.cbs.verified.Load(), b.cfg.Subscribers, err)
	}
	return nil
}

// subscribe posts subscriber i's subscribe form.
func (b *webhookBench) subscribe(ctx context.Context, client *http.Client, i int) error {
	if err := subscribeForm(ctx, client, b.hub.URL, b.topic, b.cbs.url(i)); err != nil {
		return fmt.Errorf("subscribe %d: %w", i, err)
	}
	return nil
}

// subscribeForm posts one subscribe form to hubURL, retrying while the
// hub refuses it with 503 (its verification queue full, its store slow).
func subscribeForm(ctx context.Context, client *http.Client, hubURL, topic, callback string) error {
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {callback}}
	var waited time.Duration
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, hubURL, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		msg := drain(resp)
		switch {
		case resp.StatusCode == http.StatusAccepted:
			return nil
		case resp.StatusCode == http.StatusServiceUnavailable && waited < subscribeRetryFor:
			// as a subscriber would: again after Retry-After (or a moment)
			d := subscribeRetry
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				d = time.Duration(s) * time.Second
			}
			waited += d
			if err := sleepCtx(ctx, d); err != nil {
				return err
			}
		default:
			return fmt.Errorf("hub answered %d: %s", resp.StatusCode, msg)
		}
	}
}

// A subscribe form the hub refuses with 503 is sent again after its
// Retry-After, or subscribeRetry without one, for at most subscribeRetryFor.
const (
	subscribeRetry    = 200 * time.Millisecond
	subscribeRetryFor = 2 * time.Minute
)

// run measures once: hub and every sender of the sweep at full speed,
// then the hub and the fastest sender at half of the hub's maximum.
func (b *webhookBench) run(ctx context.Context) ([]sample, error) {
	n := b.cfg.Notifications
	// Hub and ceiling take turns going first, so that neither always
	// runs on the warmer (or the busier) machine.
	b.runs++
	turns := [][]bool{{true, false}, {false, true}}[b.runs%2]
	var hubMax fanout
	var points []sweepPoint
	var err error
	for _, hubTurn := range turns {
		if hubTurn {
			if hubMax, err = b.measure(ctx, n, 0, b.publishHub); err != nil {
				return nil, fmt.Errorf("webhook hub: %w", err)
			}
		} else if points, err = b.sweep(ctx, n); err != nil {
			return nil, fmt.Errorf("webhook ceiling: %w", err)
		}
	}
	best := fastest(points)
	if best < 0 {
		return nil, errors.New("webhook ceiling: no sender measured")
	}
	rawMax, ceiling := points[best].f, b.pools[best]
	interval, nHalf := halfRate(hubMax.rate, b.cfg.Subscribers, n, b.cfg.DurationCap)
	b.lg.Info("webhook: half-rate phase", "interval", interval, "notifications", nHalf, "sender workers", ceiling.workers)
	var hubHalf, rawHalf fanout
	for _, hubTurn := range turns { // the same turns at half rate
		if hubTurn {
			if hubHalf, err = b.measure(ctx, nHalf, interval, b.publishHub); err != nil {
				return nil, fmt.Errorf("webhook hub at half rate: %w", err)
			}
		} else if rawHalf, err = b.measure(ctx, nHalf, interval, b.publishRaw(ceiling)); err != nil {
			return nil, fmt.Errorf("webhook ceiling at half rate: %w", err)
		}
	}
	// the goals of issue 27
	target85, within120 := &Target{Kind: TargetRatioMin, Value: 0.85}, &Target{Kind: TargetRatioMax, Value: 1.2}
	return append([]sample{
		{Name: "deliveries/s", Unit: "1/s", Better: "higher", Target: target85, Hub: hubMax.rate, Ceiling: rawMax.rate},
		{Name: "p50 publish→receipt", Unit: "ms", Better: "lower", Hub: ms(hubMax.t.Latency.P50), Ceiling: ms(rawMax.t.Latency.P50)},
		{Name: "p99 publish→receipt", Unit: "ms", Better: "lower", Hub: ms(hubMax.t.Latency.P99), Ceiling: ms(rawMax.t.Latency.P99)},
		{Name: "p50 at 50% of hub max", Unit: "ms", Better: "lower", Target: within120,
			Hub: ms(hubHalf.t.Latency.P50), Ceiling: ms(rawHalf.t.Latency.P50)},
		{Name: "p99 at 50% of hub max", Unit: "ms", Better: "lower", Target: within120,
			Hub: ms(hubHalf.t.Latency.P99), Ceiling: ms(rawHalf.t.Latency.P99)},
		{Name: "first receipt at 50% rate", Unit: "ms", Better: "info",
			Hub: ms(hubHalf.t.First.P50), Ceiling: ms(rawHalf.t.First.P50)},
		{Name: "first → last receipt at 50% rate", Unit: "ms", Better: "info",
			Hub: ms(hubHalf.t.Spread.P50), Ceiling: ms(rawHalf.t.Spread.P50)},
		{Name: "deliveries/s at 50% rate", Unit: "1/s", Better: "info", Hub: hubHalf.rate, Ceiling: rawHalf.rate},
		{Name: "CPU per delivery", Unit: "µs", Better: "lower", Target: &Target{Kind: TargetRatioMax, Value: 1.3},
			Hub: hubMax.cpuPer(), Ceiling: rawMax.cpuPer()},
		{Name: "CPU per delivery at 50% rate", Unit: "µs", Better: "lower", Hub: hubHalf.cpuPer(), Ceiling: rawHalf.cpuPer()},
		{Name: "receipts repeated, out of order or stray", Unit: "1", Better: "lower", Target: &Target{Kind: TargetHubMax, Value: 0},
			Hub: float64(hubMax.t.misfits() + hubHalf.t.misfits()), Ceiling: float64(rawMax.t.misfits() + rawHalf.t.misfits())},
	}, sweepSamples(b.cfg, hubMax, points, best)...), nil
}

// halfRate returns the publish interval that offers half of maxRate
// deliveries per second to receivers receivers, and how many
// notifications to publish at it: n/2, at least 2, fewer when the phase
// would take more than half of durationCap.
func halfRate(maxRate float64, receivers, n int, durationCap time.Duration) (time.Duration, int) {
	perSecond := maxRate / 2 / float64(receivers)
	interval := time.Second
	if perSecond > 0 && !math.IsNaN(perSecond) {
		interval = time.Duration(float64(time.Second) / perSecond)
	}
	nHalf := max(2, n/2)
	if limit := int(durationCap / 2 / max(interval, time.Millisecond)); nHalf > limit {
		nHalf = max(2, limit)
	}
	return interval, nHalf
}

// fanout is one measurement's outcome.
type fanout struct {
	t    tally
	rate float64 // distinct receipts per second, first send to last receipt
	// cpu is the CPU time of this whole process (hub or ceiling, the
	// callback servers and the publisher) from the first send to the last
	// receipt
	cpu time.Duration
}

// cpuPer is the process's CPU time per delivery, in microseconds.
func (f fanout) cpuPer() float64 {
	if f.t.Count == 0 {
		return 0
	}
	return float64(f.cpu.Microseconds()) / float64(f.t.Count)
}

// measure publishes n notifications with publish (back to back when
// interval is 0) and waits for every subscriber to receive each.
func (b *webhookBench) measure(ctx context.Context, n int, interval time.Duration, publish func(context.Context, int) (time.Time, error)) (fanout, error) {
	base := b.nextID
	b.nextID += n
	rc := newReceipts(b.cfg.Subscribers, base, n)
	b.cbs.measure(rc)
	defer b.cbs.measure(nil)
	cpu0, err := procCPU(os.Getpid())
	if err != nil {
		return fanout{}, err
	}
	var first time.Time
	err = schedule(ctx, n, interval, func(k int) error {
		sent, err := publish(ctx, base+k)
		if k == 0 {
			first = sent
		}
		return err
	})
	if err != nil {
		return fanout{}, err
	}
	if err := rc.wait(ctx, b.cfg.DurationCap); err != nil {
		return fanout{}, err
	}
	cpu1, err := procCPU(os.Getpid())
	if err != nil {
		return fanout{}, err
	}
	t := rc.tally()
	return fanout{t: t, rate: Rate(t.Count, t.Last.Sub(first)), cpu: cpu1 - cpu0}, nil
}

func (b *webhookBench) publishHub(ctx context.Context, id int) (time.Time, error) {
	return b.pub.publish(ctx, id)
}

// publishRaw returns the publish of sender p: the same body, POSTed to
// every callback by the sender's keep-alive workers, one notification's
// POSTs queued before the next one's, as a plain sender fans out. It
// returns once the POSTs are queued (waiting while the queue is full), as
// a hub publish returns once the log holds the notification.
func (b *webhookBench) publishRaw(p *senderPool) func(context.Context, int) (time.Time, error) {
	link := topicLink(b.hub.URL, b.topic)
	return func(ctx context.Context, id int) (time.Time, error) {
		sent := time.Now()
		body := notification(id, sent, time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC))
		for i := range b.cfg.Subscribers {
			select {
			case p.jobs <- rawJob{callback: i, body: body, link: link, ctx: ctx}:
			case <-ctx.Done():
				return sent, ctx.Err()
			}
		}
		return sent, nil
	}
}

// postRaw is one POST of a plain sender.
func postRaw(ctx context.Context, client *http.Client, callback string, body []byte, link string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callback, bytesReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", link)
	resp, err := client.Do(req)
	if err != nil {
		return // a missing receipt shows up as an incomplete measurement
	}
	drain(resp)
}
