package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/wire"
)

// sseBench is the Server-Sent Events fan-out scenario: Config.Clients
// streams on the hub's /events, against a hub-less net/http server that
// writes the same events to the same clients.
type sseBench struct {
	cfg    Config
	lg     *slog.Logger
	hub    *hubProc
	pub    *publisher
	nextID int
	rawSeq uint64
}

func newSSEBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *sseBench, err error) {
	// this process holds both ends of every stream
	if err := ensureFiles(2*uint64(cfg.Clients) + 4096); err != nil {
		return nil, fmt.Errorf("sse: %w", err)
	}
	b := &sseBench{cfg: cfg, lg: lg}
	if b.hub, err = startHub(ctx, hubOptions{PerHost: cfg.PerHost, Verbose: cfg.Verbose}, lg); err != nil {
		return nil, err
	}
	b.pub = newPublisher(b.hub)
	return b, nil
}

func (b *sseBench) close() {
	if b.hub != nil {
		b.hub.close()
	}
}

func sseNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("sse: %d Server-Sent Events streams from goroutines of this process (the hub runs here too), all on /events?channels=%s; the ceiling is a hub-less net/http server with a 256-event queue per stream, writing and flushing a pre-encoded event of the hub's shape to each; compare deliveries/s with the websocket scenario of the same run", cfg.Clients, demoChannel),
		"sse: deliveries/s and latencies are measured as for websocket",
	}
}

// run measures the hub, then the raw server, with the same clients.
func (b *sseBench) run(ctx context.Context) ([]sample, error) {
	n := b.cfg.Notifications
	hubRes, err := b.phase(ctx, "http://"+b.hub.Addr+wire.PathEvents+"?channels="+demoChannel, n, b.pub.publish)
	if err != nil {
		return nil, fmt.Errorf("sse hub: %w", err)
	}
	raw, err := startRawEvents()
	if err != nil {
		return nil, err
	}
	defer raw.close()
	rawRes, err := b.phase(ctx, raw.url, n, func(_ context.Context, id int) (time.Time, error) {
		b.rawSeq++
		sent := time.Now()
		frame, err := rawFrame(id, b.rawSeq, sent, time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC), b.hub.Topic)
		if err != nil {
			return sent, err
		}
		raw.broadcast([]byte("event: notification\nid: " + fmt.Sprint(b.rawSeq) + "\ndata: " + string(frame) + "\n\n"))
		return sent, nil
	})
	if err != nil {
		return nil, fmt.Errorf("sse ceiling: %w", err)
	}
	return []sample{
		{Name: "deliveries/s", Unit: "1/s", Better: "higher", Target: &Target{Kind: TargetRatioMin, Value: 0.7}, Hub: hubRes.rate, Ceiling: rawRes.rate},
		{Name: "p50 publish→event", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P50), Ceiling: ms(rawRes.t.Latency.P50)},
		{Name: "p99 publish→event", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(rawRes.t.Latency.P99)},
	}, nil
}

// phase connects every client to url, waits until each has its first
// event, publishes n notifications back to back, waits for every receipt
// and disconnects.
func (b *sseBench) phase(ctx context.Context, url string, n int, publish func(context.Context, int) (time.Time, error)) (fanout, error) {
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	var current atomic.Pointer[receipts]
	var ready atomic.Int64
	errc := make(chan error, 1)
	sem := make(chan struct{}, 64)
	t0 := time.Now()
	for i := range b.cfg.Clients {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := readEvents(pctx, url, i, func() { <-sem; ready.Add(1) }, func(data []byte, now time.Time) {
				if id, sent, ok := parseMark(data); ok {
					if rc := current.Load(); rc != nil {
						rc.record(i, id, sent, now)
					}
				}
			})
			if err != nil && pctx.Err() == nil {
				select {
				case errc <- fmt.Errorf("client %d: %w", i, err):
				default:
				}
			}
		}()
	}
	if err := waitFor(ctx, b.cfg.DurationCap, func() bool { return ready.Load() >= int64(b.cfg.Clients) || len(errc) > 0 }); err != nil {
		return fanout{}, fmt.Errorf("%d of %d streams open: %w", ready.Load(), b.cfg.Clients, err)
	}
	select {
	case err := <-errc:
		return fanout{}, err
	default:
	}
	b.lg.Info("sse: clients connected", "url", url, "clients", b.cfg.Clients, "took", time.Since(t0).Round(time.Millisecond))
	base := b.nextID
	b.nextID += n
	rc := newReceipts(b.cfg.Clients, base, n)
	current.Store(rc)
	var first time.Time
	err := schedule(ctx, n, 0, func(k int) error {
		sent, err := publish(ctx, base+k)
		if k == 0 {
			first = sent
		}
		return err
	})
	if err == nil {
		err = rc.wait(ctx, b.cfg.DurationCap)
	}
	t := rc.tally()
	if err != nil {
		return fanout{}, fmt.Errorf("%w (%d of %d receipts)", err, t.Count, t.Want)
	}
	return fanout{t: t, rate: Rate(t.Count, t.Last.Sub(first))}, nil
}

// readEvents opens one stream (from one of 127.0.0.1-127.0.0.4, to widen
// the pool of ephemeral ports), calls opened after its first event and
// event with the data of each notification event until ctx ends.
func readEvents(ctx context.Context, url string, i int, opened func(), event func([]byte, time.Time)) error {
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%4))}
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: local, Timeout: 10 * time.Second}).DialContext,
		ReadBufferSize: 4096, WriteBufferSize: 512, DisableCompression: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		opened()
		return fmt.Errorf("sse: %w", err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		opened()
		return fmt.Errorf("sse: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		opened()
		return fmt.Errorf("sse: status %d", resp.StatusCode)
	}
	r := wire.NewEventReader(bufio.NewReaderSize(resp.Body, 4096))
	first := true
	for {
		ev, err := r.Next()
		if err != nil {
			if first {
				opened()
			}
			return fmt.Errorf("sse: %w", err)
		}
		now := time.Now()
		if first {
			first = false
			opened()
		}
		if ev.Type == wire.EventNotification {
			event([]byte(ev.Data), now)
		}
	}
}

// rawEvents is the ceiling: a net/http server that writes each broadcast
// event to every open stream, through a bounded queue per stream.
type rawEvents struct {
	url string
	srv *http.Server
	ln  net.Listener

	mu    sync.Mutex
	conns map[chan []byte]struct{}
}

func startRawEvents() (*rawEvents, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("raw events: %w", err)
	}
	r := &rawEvents{ln: ln, url: "http://" + ln.Addr().String() + "/events", conns: map[chan []byte]struct{}{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *rawEvents) serve(w http.ResponseWriter, req *http.Request) {
	q := make(chan []byte, 256)
	r.mu.Lock()
	r.conns[q] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, q)
		r.mu.Unlock()
	}()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", wire.ContentTypeEventStream)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("event: live\ndata: {}\n\n")); err != nil || rc.Flush() != nil {
		return
	}
	for {
		select {
		case <-req.Context().Done():
			return
		case b := <-q:
			_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := w.Write(b); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// broadcast queues an event for every stream; a full queue drops it.
func (r *rawEvents) broadcast(ev []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for q := range r.conns {
		select {
		case q <- ev:
		default:
		}
	}
}

func (r *rawEvents) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = r.srv.Close()
	}
	_ = r.srv.Close()
}
