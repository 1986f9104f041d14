package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rshub/rshub/server"
)

// demoChannel is the open, hosted channel that server.Config.Demo creates.
const demoChannel = "demo"

// hubProc is a whole hub started in this process with server.Run.
type hubProc struct {
	URL        string // hub URL, ends in "/"
	Addr       string // host:port of its HTTP server
	Topic      string // topic URI of the demo channel
	NATSURL    string // embedded NATS server's client URL; empty when not listening
	AdminToken string
	stop       context.CancelFunc
	done       chan error
	dir        string
}

// hubOptions are the settings a scenario varies.
type hubOptions struct {
	PerHost    int
	NATSListen bool // expose the embedded NATS server on a loopback port
	Verbose    bool
	Retry      string // webhook retry schedule (--retry); "" is the default
	// NoBreakers turns the circuit breakers off (host and callback), for a
	// scenario whose subscribers fail on purpose and then catch up.
	NoBreakers bool
	// OpenTopics lets a thin ping open a channel for its topic.
	OpenTopics bool
}

// startHub runs a hub with an embedded NATS server in a temporary data
// directory, loopback callbacks allowed and the open demo channel, and
// returns once it serves.
func startHub(ctx context.Context, o hubOptions, logger *slog.Logger) (*hubProc, error) {
	dir, err := os.MkdirTemp("", "rshub-bench-*")
	if err != nil {
		return nil, fmt.Errorf("hub data dir: %w", err)
	}
	h := &hubProc{AdminToken: newToken(), done: make(chan error, 1), dir: dir}
	natsListen := "off"
	if o.NATSListen {
		port, err := freePort()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		natsListen = fmt.Sprintf("127.0.0.1:%d", port)
		h.NATSURL = "nats://" + natsListen
	}
	cfg := benchHubConfig(dir, h.AdminToken, natsListen, o)
	hubLog := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if o.Verbose {
		hubLog = logger
	}
	hubLog = hubLog.With("in", "hub")
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.stop = cancel
	started := make(chan server.Started, 1)
	goLabelled("hub", func() {
		h.done <- server.Run(rctx, cfg, hubLog, func(s server.Started) { started <- s })
	})
	select {
	case s := <-started:
		h.URL, h.Addr = s.HubURL, s.Addr
		h.Topic = "http://" + s.Addr + "/topics/" + demoChannel
		return h, nil
	case err := <-h.done:
		cancel()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start hub: %w", err)
	case <-ctx.Done():
		h.close()
		return nil, ctx.Err()
	}
}

// newToken returns a random admin token.
func newToken() string {
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	return hex.EncodeToString(tok)
}

// benchHubConfig is the configuration of every benchmark hub: embedded
// NATS in dir (listening on natsListen, or "off"), loopback callbacks
// allowed, the open demo channel, admin token token.
func benchHubConfig(dir, token, natsListen string, o hubOptions) server.Config {
	return server.Config{
		Listen:     "127.0.0.1:0",
		DataDir:    dir,
		NATSListen: natsListen,
		// the bench's subscriber reads the log without credentials
		NATSAnonymousRead:       natsListen != "off",
		NATSReplicas:            1,
		Sync:                    "default",
		MaxBody:                 10 << 20,
		LeaseMin:                300,
		LeaseDefault:            864000,
		LeaseMax:                2678400,
		AdminToken:              token,
		AllowNetworks:           "127.0.0.0/8",
		SigMethod:               "sha256",
		PerHost:                 cmp.Or(o.PerHost, server.Defaults().PerHost),
		PerHostMax:              max(o.PerHost, server.Defaults().PerHostMax),
		Retry:                   o.Retry,
		BreakerFailures:         breakersOff(o.NoBreakers),
		BreakerCallbackFailures: breakersOff(o.NoBreakers),
		LogFormat:               "text",
		LogLevel:                "warn",
		Demo:                    true,
		OpenTopics:              o.OpenTopics,
		ShutdownTimeout:         15 * time.Second,
		RotateEntries:           50000,
		RotatePeriod:            24 * time.Hour,
		ClaimTTL:                30 * time.Second,
		Reconcile:               5 * time.Second,
		StartupTimeout:          time.Minute,
	}
}

// close shuts the hub down and removes its data directory.
func (h *hubProc) close() {
	h.stop()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
	}
	_ = os.RemoveAll(h.dir)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// publisher sends fat pings to one hub channel in Source-time order: each
// notification covers the second after the previous one, so continuity
// holds across every measurement on the same hub.
type publisher struct {
	client *http.Client
	hubURL string
	topic  string
	link   string
	next   time.Time // from of the next notification
}

func newPublisher(h *hubProc) *publisher {
	return &publisher{
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
		hubURL: h.URL,
		topic:  h.Topic,
		link:   topicLink(h.URL, h.Topic),
		next:   time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// publish sends notification id stamped with the current time and waits
// for the hub's 200; it returns the send time.
func (p *publisher) publish(ctx context.Context, id int) (time.Time, error) {
	sent, err := publishFatPing(ctx, p.client, p.hubURL, p.link, id, p.next)
	if err == nil {
		p.next = p.next.Add(time.Second)
	}
	return sent, err
}

// topicLink is the Link header of a publish to topic at hubURL.
func topicLink(hubURL, topic string) string {
	return "<" + topic + `>; rel="self", <` + hubURL + `>; rel="hub"`
}

// publishFatPing POSTs notification id, covering Source time [from,
// from+1s) and stamped with the current time, to the hub with the Link
// header link, and waits for the hub's 200; it returns the send time.
func publishFatPing(ctx context.Context, client *http.Client, hubURL, link string, id int, from time.Time) (time.Time, error) {
	sent := time.Now()
	body := notification(id, sent, from)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hubURL, bytesReader(body))
	if err != nil {
		return sent, fmt.Errorf("publish %d: %w", id, err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", link)
	resp, err := client.Do(req)
	if err != nil {
		return sent, fmt.Errorf("publish %d: %w", id, err)
	}
	msg := drain(resp)
	if resp.StatusCode != http.StatusOK {
		return sent, fmt.Errorf("publish %d: hub answered %d: %s", id, resp.StatusCode, msg)
	}
	return sent, nil
}

// errIncomplete marks a measurement whose receipts did not all arrive
// within the duration cap.
var errIncomplete = errors.New("not every receipt arrived within --duration-cap")

// breakersOff is a breaker's failures setting: -1 (off) when off, else 0
// (the hub's default).
func breakersOff(off bool) int {
	if off {
		return -1
	}
	return 0
}
