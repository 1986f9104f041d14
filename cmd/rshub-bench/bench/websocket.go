package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// wsBench is the WebSocket fan-out scenario: Config.Clients connections
// from a child process on the hub's /ws, against a raw gorilla broadcast
// server with the same clients, plus memory per idle connection of each.
type wsBench struct {
	cfg    Config
	lg     *slog.Logger
	hub    *hubProc
	pub    *publisher
	fleet  *fleetProc
	kind   string // the fleet's connections: "" WebSockets, kindSSE streams
	nextID int
	rawSeq uint64
}

func newWSBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *wsBench, err error) {
	// The hub side holds one descriptor per client, and so does the child.
	if err := ensureFiles(uint64(cfg.Clients) + 4096); err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	b := &wsBench{cfg: cfg, lg: lg}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.hub, err = startHub(ctx, hubOptions{PerHost: cfg.PerHost, Verbose: cfg.Verbose}, lg); err != nil {
		return nil, err
	}
	b.pub = newPublisher(b.hub)
	if b.fleet, err = startFleet(cfg, lg); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *wsBench) close() {
	if b.fleet != nil {
		b.fleet.close()
	}
	if b.hub != nil {
		b.hub.close()
	}
}

func wsNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("websocket: %d clients in a child process (this binary re-executed), all on /ws?channels=%s; the ceiling is a hub-less gorilla server with the same per-connection reader+writer goroutines, 256-frame queues and buffer sizes, broadcasting a prepared frame of the hub's JSON shape", cfg.Clients, demoChannel),
		"websocket: deliveries/s = notification frames received across clients / (last frame − first publish sent); latency = frame receipt in the child − publish sent (wall clock, same machine); back-to-back publishing queues frames, so the latencies to compare are the ones at 50% of the hub's maximum (notifications/s = half the hub's deliveries/s / clients, hub and ceiling alike)",
		"websocket: memory per idle connection = growth of this process's runtime HeapInuse+StackInuse (after GC) from before connecting to all clients connected and idle, divided by clients; RSS per connection is the same from /proc/self/status VmRSS (Go keeps freed pages, so it is noisier)",
	}
}

// run measures the hub, then the raw broadcast server, with the same
// clients.
func (b *wsBench) run(ctx context.Context) ([]sample, error) {
	n, clients := b.cfg.Notifications, b.cfg.Clients
	wsURL := "ws://" + b.hub.Addr + "/ws?channels=" + demoChannel
	hubMem, err := b.connectIdle(ctx, wsURL, func() int { return b.hubGauge(ctx, "rshub_websocket_connections") })
	if err != nil {
		return nil, fmt.Errorf("websocket hub: %w", err)
	}
	hubRes, err := b.measure(ctx, n, 0, b.pub.publish)
	var hubHalf fanout
	interval, nHalf := halfRate(hubRes.rate, clients, n, b.cfg.DurationCap)
	if err == nil {
		hubHalf, err = b.measure(ctx, nHalf, interval, b.pub.publish)
	}
	if cerr := b.disconnect(ctx, func() int { return b.hubGauge(ctx, "rshub_websocket_connections") }); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("websocket hub: %w", err)
	}

	raw, err := startRawBroadcast()
	if err != nil {
		return nil, err
	}
	defer raw.close()
	rawMem, err := b.connectIdle(ctx, raw.url, raw.count)
	if err != nil {
		return nil, fmt.Errorf("websocket ceiling: %w", err)
	}
	publishRaw := func(_ context.Context, id int) (time.Time, error) {
		b.rawSeq++
		sent := time.Now()
		frame, err := rawFrame(id, b.rawSeq, sent, time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC), b.hub.Topic)
		if err != nil {
			return sent, err
		}
		return sent, raw.broadcast(frame)
	}
	rawRes, err := b.measure(ctx, n, 0, publishRaw)
	var rawHalf fanout
	if err == nil {
		rawHalf, err = b.measure(ctx, nHalf, interval, publishRaw)
	}
	if cerr := b.disconnect(ctx, raw.count); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("websocket ceiling: %w", err)
	}
	if d := raw.dropped.Load(); d > 0 {
		b.lg.Warn("websocket ceiling dropped frames on full queues", "frames", d)
	}
	return []sample{
		{Name: "deliveries/s", Unit: "1/s", Better: "higher", Target: &Target{Kind: TargetRatioMin, Value: 0.7}, Hub: hubRes.rate, Ceiling: rawRes.rate},
		{Name: "p50 publish→frame", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P50), Ceiling: ms(rawRes.t.Latency.P50)},
		{Name: "p99 publish→frame", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(rawRes.t.Latency.P99)},
		{Name: "p50 at 50% of hub max", Unit: "ms", Better: "lower", Hub: ms(hubHalf.t.Latency.P50), Ceiling: ms(rawHalf.t.Latency.P50)},
		{Name: "p99 at 50% of hub max", Unit: "ms", Better: "lower", Hub: ms(hubHalf.t.Latency.P99), Ceiling: ms(rawHalf.t.Latency.P99)},
		{Name: "heap+stack per idle conn", Unit: "B", Better: "lower", Target: &Target{Kind: TargetHubMax, Value: 16 << 10},
			Hub: perConn(hubMem[0].HeapStack, hubMem[1].HeapStack, clients), Ceiling: perConn(rawMem[0].HeapStack, rawMem[1].HeapStack, clients)},
		{Name: "RSS per idle conn", Unit: "B", Better: "lower",
			Hub: perConn(hubMem[0].RSS, hubMem[1].RSS, clients), Ceiling: perConn(rawMem[0].RSS, rawMem[1].RSS, clients)},
	}, nil
}

// connectIdle reads this process's memory, has the fleet open every
// connection to url, waits until the server counts them all, and reads
// the memory again.
func (b *wsBench) connectIdle(ctx context.Context, url string, count func() int) ([2]memory, error) {
	var mem [2]memory
	mem[0] = readMemory()
	t0 := time.Now()
	r, err := b.fleet.call(ctx, fleetCmd{Op: "connect", Kind: b.kind, URL: url, N: b.cfg.Clients, Concurrency: 64}, b.cfg.DurationCap+15*time.Second)
	if err != nil {
		return mem, err
	}
	if err := waitFor(ctx, b.cfg.DurationCap, func() bool { return count() >= b.cfg.Clients }); err != nil {
		return mem, fmt.Errorf("%d clients connected, server counts %d: %w", r.Connected, count(), err)
	}
	b.lg.Info(b.name()+": clients connected", "url", url, "clients", r.Connected, "took", time.Since(t0).Round(time.Millisecond))
	time.Sleep(200 * time.Millisecond) // let session start-up work finish
	mem[1] = readMemory()
	return mem, nil
}

// disconnect closes every client and waits until the server has let them
// go, so the next measurement starts from an empty server.
func (b *wsBench) disconnect(ctx context.Context, count func() int) error {
	if _, err := b.fleet.call(ctx, fleetCmd{Op: "close"}, b.cfg.DurationCap+15*time.Second); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, func() bool { return count() == 0 }); err != nil {
		return fmt.Errorf("server still counts %d connections after the clients closed: %w", count(), err)
	}
	return nil
}

// measure publishes n notifications, one per interval or back to back when
// it is 0, and waits until every client has a frame of each.
func (b *wsBench) measure(ctx context.Context, n int, interval time.Duration, publish func(context.Context, int) (time.Time, error)) (fanout, error) {
	base := b.nextID
	b.nextID += n
	if _, err := b.fleet.call(ctx, fleetCmd{Op: "expect", Base: base, N: n}, 10*time.Second); err != nil {
		return fanout{}, err
	}
	var first time.Time
	err := schedule(ctx, n, interval, func(k int) error {
		sent, err := publish(ctx, base+k)
		if k == 0 {
			first = sent
		}
		return err
	})
	if err != nil {
		return fanout{}, err
	}
	r, err := b.fleet.call(ctx, fleetCmd{Op: "wait", LimitMs: b.cfg.DurationCap.Milliseconds()}, b.cfg.DurationCap+15*time.Second)
	if err != nil {
		return fanout{}, err
	}
	t := tally{Count: r.Count, Want: r.Want, Dups: r.Dups, Stray: r.Stray, Last: time.Unix(0, r.Last),
		Latency: Latencies{Count: r.Count, P50: time.Duration(r.P50), P99: time.Duration(r.P99), Max: time.Duration(r.Max)}}
	return fanout{t: t, rate: Rate(t.Count, t.Last.Sub(first))}, nil
}

// hubGauge reads one of the hub's gauges (rshub_websocket_connections,
// rshub_events_connections); -1 when it cannot.
func (b *wsBench) hubGauge(ctx context.Context, name string) int {
	v, ok, err := readGauge(ctx, http.DefaultClient, b.hub.URL, name)
	if err != nil || !ok {
		return -1
	}
	return int(v)
}

// waitFor polls cond every 50 ms until it holds, limit passes or ctx ends.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// name is the scenario's name in logs.
func (b *wsBench) name() string {
	if b.kind == kindSSE {
		return "sse"
	}
	return "websocket"
}
