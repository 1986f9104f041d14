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
	"time"

	"github.com/rshub/rshub/wire"
)

// sseBench is the Server-Sent Events fan-out scenario: Config.Clients
// streams from the same child process as the websocket scenario's clients
// on the hub's /events, against a hub-less net/http server that writes the
// same events to the same clients. It shares the websocket scenario's
// fleet, measurement and memory accounting.
type sseBench struct {
	*wsBench
}

func newSSEBench(ctx context.Context, cfg Config, lg *slog.Logger) (*sseBench, error) {
	w, err := newWSBench(ctx, cfg, lg)
	if err != nil {
		return nil, err
	}
	w.kind = kindSSE
	return &sseBench{w}, nil
}

func sseNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("sse: %d Server-Sent Events streams in the websocket scenario's child process, all on /events?channels=%s; the ceiling is a hub-less net/http server with a 256-event queue per stream, writing and flushing a pre-encoded event of the hub's shape to each; compare deliveries/s with the websocket scenario of the same run", cfg.Clients, demoChannel),
		"sse: deliveries/s, latencies and memory per idle stream are measured as for websocket",
	}
}

// run measures the hub, then the raw server, with the same clients.
func (b *sseBench) run(ctx context.Context) ([]sample, error) {
	n, clients := b.cfg.Notifications, b.cfg.Clients
	hubCount := func() int { return b.hubGauge(ctx, "rshub_events_connections") }
	hubMem, err := b.connectIdle(ctx, "http://"+b.hub.Addr+wire.PathEvents+"?channels="+demoChannel, hubCount)
	if err != nil {
		return nil, fmt.Errorf("sse hub: %w", err)
	}
	hubRes, err := b.measure(ctx, n, 0, b.pub.publish)
	if cerr := b.disconnect(ctx, hubCount); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("sse hub: %w", err)
	}
	raw, err := startRawEvents()
	if err != nil {
		return nil, err
	}
	defer raw.close()
	rawMem, err := b.connectIdle(ctx, raw.url, raw.count)
	if err != nil {
		return nil, fmt.Errorf("sse ceiling: %w", err)
	}
	rawRes, err := b.measure(ctx, n, 0, func(_ context.Context, id int) (time.Time, error) {
		b.rawSeq++
		sent := time.Now()
		frame, err := rawFrame(id, b.rawSeq, sent, time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC), b.hub.Topic)
		if err != nil {
			return sent, err
		}
		raw.broadcast([]byte("event: notification\nid: " + fmt.Sprint(b.rawSeq) + "\ndata: " + string(frame) + "\n\n"))
		return sent, nil
	})
	if cerr := b.disconnect(ctx, raw.count); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("sse ceiling: %w", err)
	}
	return []sample{
		{Name: "deliveries/s", Unit: "1/s", Better: "higher", Target: &Target{Kind: TargetRatioMin, Value: 0.7}, Hub: hubRes.rate, Ceiling: rawRes.rate},
		{Name: "p50 publish→event", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P50), Ceiling: ms(rawRes.t.Latency.P50)},
		{Name: "p99 publish→event", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(rawRes.t.Latency.P99)},
		{Name: "heap+stack per idle stream", Unit: "B", Better: "lower",
			Hub: perConn(hubMem[0].HeapStack, hubMem[1].HeapStack, clients), Ceiling: perConn(rawMem[0].HeapStack, rawMem[1].HeapStack, clients)},
	}, nil
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

// count returns how many streams are open.
func (r *rawEvents) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

func (r *rawEvents) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = r.srv.Close()
	}
	_ = r.srv.Close()
}
