package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/wire"
)

// Subjects of the NATS ceilings, on an embedded server of their own (the
// hub's lets no client but the hub write).
const (
	rawJSStream    = "RSHUB_BENCH_RAW"
	rawJSSubject   = "rshub-bench.raw.js"
	rawCoreSubject = "rshub-bench.raw.core"
	rawHTTPSubject = "rshub-bench.raw.http"
)

// natsBench is the NATS scenario: fat pings to the hub read by a plain
// nats.go subscriber on rshub.notify.<channel>, against raw JetStream
// publish (acknowledged, file storage) and raw core NATS publish (flushed)
// of the same bodies to a subscriber on an embedded server of the same
// settings (its own: the hub's lets no client but the hub write). The
// hub's subscriber reads with --nats-anonymous-read.
type natsBench struct {
	cfg   Config
	lg    *slog.Logger
	hub   *hubProc
	pub   *publisher
	pubNC *nats.Conn
	subNC *nats.Conn // the hub's subscriber
	// ceiling is the raw ceilings' server, ceilSubNC their subscriber.
	ceiling    *embednats.Server
	ceilingDir string
	ceilSubNC  *nats.Conn
	js         jetstream.JetStream
	current    atomic.Pointer[receipts]
	nextID     int
	// relay is the HTTP ceiling: a loopback server whose handler publishes
	// the POSTed body to JetStream and answers 200 once acknowledged.
	relay     *http.Server
	relayURL  string
	relayHTTP *http.Client
}

func newNATSBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *natsBench, err error) {
	b := &natsBench{cfg: cfg, lg: lg}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.hub, err = startHub(ctx, hubOptions{PerHost: cfg.PerHost, NATSListen: true, Verbose: cfg.Verbose}, lg); err != nil {
		return nil, err
	}
	b.pub = newPublisher(b.hub)
	if b.ceilingDir, err = os.MkdirTemp("", "rshub-bench-ceiling-*"); err != nil {
		return nil, fmt.Errorf("nats: ceiling data dir: %w", err)
	}
	if b.ceiling, err = embednats.Start(embednats.Config{DataDir: b.ceilingDir, Port: -1}); err != nil {
		return nil, fmt.Errorf("nats: ceiling server: %w", err)
	}
	if b.subNC, err = nats.Connect(b.hub.NATSURL, nats.Name("rshub-bench-sub")); err != nil {
		return nil, fmt.Errorf("nats: connect subscriber: %w", err)
	}
	if b.ceilSubNC, err = nats.Connect(b.ceiling.ClientURL(), nats.Name("rshub-bench-ceiling-sub")); err != nil {
		return nil, fmt.Errorf("nats: connect ceiling subscriber: %w", err)
	}
	if b.pubNC, err = nats.Connect(b.ceiling.ClientURL(), nats.Name("rshub-bench-pub")); err != nil {
		return nil, fmt.Errorf("nats: connect raw publisher: %w", err)
	}
	for nc, subjects := range map[*nats.Conn][]string{b.subNC: {wire.Subject(wire.SubjectPrefix, demoChannel)}, b.ceilSubNC: {rawJSSubject, rawCoreSubject, rawHTTPSubject}} {
		for _, subj := range subjects {
			if _, err := nc.Subscribe(subj, b.receive); err != nil {
				return nil, fmt.Errorf("nats: subscribe %s: %w", subj, err)
			}
		}
		if err := nc.Flush(); err != nil {
			return nil, fmt.Errorf("nats: subscribe: %w", err)
		}
	}
	if b.js, err = jetstream.New(b.pubNC); err != nil {
		return nil, fmt.Errorf("nats: jetstream: %w", err)
	}
	if _, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: rawJSStream, Subjects: []string{rawJSSubject, rawHTTPSubject}, Storage: jetstream.FileStorage, Replicas: 1,
	}); err != nil {
		return nil, fmt.Errorf("nats: create ceiling stream: %w", err)
	}
	if err := b.startRelay(); err != nil {
		return nil, err
	}
	return b, nil
}

// startRelay starts the HTTP→JetStream ceiling: the hub's intake without
// parsing, validation, continuity or state.
func (b *natsBench) startRelay() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("nats: relay server: %w", err)
	}
	b.relayURL = "http://" + ln.Addr().String() + "/"
	b.relayHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.relay = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, sent, _ := parseMark(body)
		m := b.rawMsg(rawHTTPSubject, id, sent)
		m.Data = body
		if _, err := b.js.PublishMsg(r.Context(), m); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = b.relay.Serve(ln) }()
	return nil
}

// publishRelay POSTs notification id to the relay as a Source would post
// a fat ping, and waits for its 200.
func (b *natsBench) publishRelay(ctx context.Context, id int) (time.Time, error) {
	sent := time.Now()
	body := notification(id, sent, time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.relayURL, bytesReader(body))
	if err != nil {
		return sent, fmt.Errorf("relay publish: %w", err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", topicLink(b.hub.URL, b.hub.Topic))
	resp, err := b.relayHTTP.Do(req)
	if err != nil {
		return sent, fmt.Errorf("relay publish: %w", err)
	}
	if msg := drain(resp); resp.StatusCode != http.StatusOK {
		return sent, fmt.Errorf("relay publish: status %d: %s", resp.StatusCode, msg)
	}
	return sent, nil
}

func natsNotes() []string {
	return []string{
		"nats: hub = fat-ping POST → plain nats.go subscriber on rshub.notify.demo; ceiling = the same bodies with the rshub headers published on an embedded server of the same settings (its own: the hub's lets no client but the hub write) as JetStream publish (file storage, like the hub's log) and as core NATS publish + flush; all closed-loop: one publisher, each publish waits for its 200 / ack / flush before the next",
		"nats: HTTP→JetStream = the same fat-ping POST to a bare loopback handler that publishes the body to JetStream and answers 200 once acked: the hub's intake minus parsing, validation, continuity and state",
		"nats: msgs/s = messages received / (last receipt − first publish sent); latency (p50/p99) = receipt at the subscriber − publish sent",
	}
}

func (b *natsBench) close() {
	if b.relay != nil {
		_ = b.relay.Close()
	}
	if b.pubNC != nil {
		b.pubNC.Close()
	}
	if b.subNC != nil {
		b.subNC.Close()
	}
	if b.ceilSubNC != nil {
		b.ceilSubNC.Close()
	}
	if b.ceiling != nil {
		b.ceiling.Shutdown()
	}
	if b.ceilingDir != "" {
		_ = os.RemoveAll(b.ceilingDir)
	}
	if b.hub != nil {
		b.hub.close()
	}
}

func (b *natsBench) receive(m *nats.Msg) {
	now := time.Now()
	id, sent, ok := parseMark(m.Data)
	if rc := b.current.Load(); rc != nil && ok {
		rc.record(0, id, sent, now)
	}
}

// run measures the hub, raw JetStream and raw core NATS once each.
func (b *natsBench) run(ctx context.Context) ([]sample, error) {
	n := b.cfg.NATSMessages
	hubRes, err := b.measure(ctx, n, b.pub.publish)
	if err != nil {
		return nil, fmt.Errorf("nats hub: %w", err)
	}
	relayRes, err := b.measure(ctx, n, b.publishRelay)
	if err != nil {
		return nil, fmt.Errorf("nats HTTP→JetStream ceiling: %w", err)
	}
	jsRes, err := b.measure(ctx, n, func(ctx context.Context, id int) (time.Time, error) {
		sent := time.Now()
		_, err := b.js.PublishMsg(ctx, b.rawMsg(rawJSSubject, id, sent))
		return sent, err
	})
	if err != nil {
		return nil, fmt.Errorf("nats JetStream ceiling: %w", err)
	}
	coreRes, err := b.measure(ctx, n, func(ctx context.Context, id int) (time.Time, error) {
		sent := time.Now()
		if err := b.pubNC.PublishMsg(b.rawMsg(rawCoreSubject, id, sent)); err != nil {
			return sent, err
		}
		return sent, b.pubNC.FlushTimeout(10 * time.Second)
	})
	if err != nil {
		return nil, fmt.Errorf("nats core ceiling: %w", err)
	}
	return []sample{
		{Name: "msgs/s vs HTTP→JetStream", Unit: "1/s", Better: "higher", Hub: hubRes.rate, Ceiling: relayRes.rate},
		{Name: "p50 vs HTTP→JetStream", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P50), Ceiling: ms(relayRes.t.Latency.P50)},
		{Name: "p99 vs HTTP→JetStream", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(relayRes.t.Latency.P99)},
		{Name: "msgs/s vs JetStream", Unit: "1/s", Better: "higher", Hub: hubRes.rate, Ceiling: jsRes.rate},
		{Name: "p50 vs JetStream", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P50), Ceiling: ms(jsRes.t.Latency.P50)},
		{Name: "p99 vs JetStream", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(jsRes.t.Latency.P99)},
		{Name: "msgs/s vs core NATS", Unit: "1/s", Better: "higher", Hub: hubRes.rate, Ceiling: coreRes.rate},
		{Name: "p99 vs core NATS", Unit: "ms", Better: "lower", Hub: ms(hubRes.t.Latency.P99), Ceiling: ms(coreRes.t.Latency.P99)},
	}, nil
}

// rawMsg is notification id as the hub's log would store it: the same
// body and the headers hub/jslog writes.
func (b *natsBench) rawMsg(subject string, id int, sent time.Time) *nats.Msg {
	from := time.Date(2020, 1, 1, 0, 0, id, 0, time.UTC)
	m := nats.NewMsg(subject)
	m.Data = notification(id, sent, from)
	m.Header.Set("Nats-Msg-Id", "rshub-bench-"+strconv.Itoa(id)+"-"+strconv.FormatInt(sent.UnixNano(), 10))
	m.Header.Set("Rshub-Topic", b.hub.Topic)
	m.Header.Set("Rshub-Channel", demoChannel)
	m.Header.Set("Rshub-From", from.Format(time.RFC3339Nano))
	m.Header.Set("Rshub-Until", from.Add(time.Second).Format(time.RFC3339Nano))
	m.Header.Set("Content-Type", "application/xml")
	m.Header.Set("Rshub-Received", sent.UTC().Format(time.RFC3339Nano))
	m.Header.Set("Rshub-Entries", strconv.Itoa(entriesPerNotification))
	return m
}

// measure publishes n messages sequentially and waits for the subscriber
// to receive each.
func (b *natsBench) measure(ctx context.Context, n int, publish func(context.Context, int) (time.Time, error)) (fanout, error) {
	base := b.nextID
	b.nextID += n
	rc := newReceipts(1, base, n)
	b.current.Store(rc)
	defer b.current.Store(nil)
	var first time.Time
	deadline := time.Now().Add(b.cfg.DurationCap)
	err := schedule(ctx, n, 0, func(k int) error {
		if time.Now().After(deadline) {
			return fmt.Errorf("published %d of %d within --duration-cap: %w", k, n, errIncomplete)
		}
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
	t := rc.tally()
	return fanout{t: t, rate: Rate(t.Count, t.Last.Sub(first))}, nil
}
