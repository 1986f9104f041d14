package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/wire"
)

// catchUpBench is the catch-up scenario: two webhook subscriptions of one
// channel, one coalescing (rshub.coalesce=on) and one not (off), are
// offline while Config.CatchUpNotifications notifications touching
// Config.CatchUpResources resources are published, then come back one
// after the other; each one's catch-up time (back online → the last
// sequence received) and bytes received are measured. The table's "hub"
// column is the coalesced subscription, "ceiling" the one-by-one one.
type catchUpBench struct {
	cfg  Config
	lg   *slog.Logger
	hub  *hubProc
	pub  *publisher
	rng  *rand.Rand
	seen map[int]bool // resources created so far
	last atomic.Uint64
	subs [2]*catchUpSub // coalesced, one by one
}

// catchUpSub is one subscription's callback server.
type catchUpSub struct {
	srv      *http.Server
	url      string
	online   atomic.Bool
	verified atomic.Bool
	bytes    atomic.Int64
	posts    atomic.Int64
	done     chan struct{} // closed when the last sequence arrived
	want     atomic.Uint64
	closed   atomic.Bool
}

// offlineStatus answers deliveries while a subscriber is offline: retried
// by the hub, and not a host failure, so its circuit breaker stays closed
// and catch-up starts at the next retry once the subscriber is back.
const offlineStatus = http.StatusConflict

func newCatchUpBench(ctx context.Context, cfg Config, lg *slog.Logger) (_ *catchUpBench, err error) {
	b := &catchUpBench{cfg: cfg, lg: lg, rng: rand.New(rand.NewPCG(1, 2)), seen: map[int]bool{}}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if b.hub, err = startHub(ctx, hubOptions{PerHost: cfg.PerHost, Verbose: cfg.Verbose, Retry: "20ms,x1,max=20ms,attempts=0,jitter=0", NoBreakers: true}, lg); err != nil {
		return nil, err
	}
	b.pub = newPublisher(b.hub)
	for i, mode := range []string{wire.CoalesceOn, wire.CoalesceOff} {
		s, err := newCatchUpSub()
		if err != nil {
			return nil, err
		}
		b.subs[i] = s
		if err := b.subscribe(ctx, s, mode); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func newCatchUpSub() (*catchUpSub, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("catchup: callback server: %w", err)
	}
	s := &catchUpSub{url: "http://" + ln.Addr().String() + "/cb", done: make(chan struct{})}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// ServeHTTP answers verification and deliveries.
func (s *catchUpSub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.verified.Store(true)
		_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
		return
	}
	n, _ := io.Copy(io.Discard, r.Body)
	if !s.online.Load() {
		w.WriteHeader(offlineStatus)
		return
	}
	s.bytes.Add(n)
	s.posts.Add(1)
	seq, _ := strconv.ParseUint(r.Header.Get(wire.HeaderSeq), 10, 64)
	if want := s.want.Load(); want > 0 && seq >= want && s.closed.CompareAndSwap(false, true) {
		close(s.done)
	}
}

// subscribe subscribes s with rshub.coalesce=mode and waits until the hub
// delivers to it (a first notification, received while online).
func (b *catchUpBench) subscribe(ctx context.Context, s *catchUpSub, mode string) error {
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {b.hub.Topic}, "hub.callback": {s.url}, wire.ParamCoalesce: {mode}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.hub.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("catchup: subscribe: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.pub.client.Do(req)
	if err != nil {
		return fmt.Errorf("catchup: subscribe: %w", err)
	}
	if msg := drain(resp); resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("catchup: subscribe: hub answered %d: %s", resp.StatusCode, msg)
	}
	deadline := time.Now().Add(b.cfg.DurationCap)
	for !s.verified.Load() {
		if time.Now().After(deadline) {
			return fmt.Errorf("catchup: subscription not verified within %v", b.cfg.DurationCap)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// run measures once: both subscribers offline during the notifications,
// then the coalesced one back, then the other.
func (b *catchUpBench) run(ctx context.Context) ([]sample, error) {
	for _, s := range b.subs {
		s.online.Store(false)
		s.bytes.Store(0)
		s.posts.Store(0)
		s.done = make(chan struct{})
		s.closed.Store(false)
		s.want.Store(0)
	}
	t0 := time.Now()
	for range b.cfg.CatchUpNotifications {
		if err := b.publish(ctx); err != nil {
			return nil, err
		}
	}
	b.lg.Info("catchup: published", "notifications", b.cfg.CatchUpNotifications, "took", time.Since(t0).Round(time.Millisecond))
	var took [2]time.Duration
	for i, s := range b.subs {
		s.want.Store(b.last.Load())
		start := time.Now()
		s.online.Store(true)
		select {
		case <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(b.cfg.DurationCap):
			return nil, fmt.Errorf("catchup: subscriber %d not caught up within --duration-cap: %w", i, errIncomplete)
		}
		took[i] = time.Since(start)
	}
	c, o := b.subs[0], b.subs[1]
	return []sample{
		{Name: "catch-up time (coalesced | one by one)", Unit: "s", Better: "lower", Hub: took[0].Seconds(), Ceiling: took[1].Seconds()},
		{Name: "bytes received (coalesced | one by one)", Unit: "B", Better: "lower", Hub: float64(c.bytes.Load()), Ceiling: float64(o.bytes.Load())},
		{Name: "POSTs received (coalesced | one by one)", Unit: "", Better: "lower", Hub: float64(c.posts.Load()), Ceiling: float64(o.posts.Load())},
	}, nil
}

// publish sends one notification changing one of the resources.
func (b *catchUpBench) publish(ctx context.Context) error {
	from := b.pub.next
	r := b.rng.IntN(b.cfg.CatchUpResources)
	change := "updated"
	if !b.seen[r] {
		change, b.seen[r] = "created", true
	}
	var body bytes.Buffer
	fmt.Fprintf(&body, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.org/catchup/%d</loc><rs:md change="%s" datetime="%s" hash="md5:%032x" length="%d" type="text/plain"/></url>
</urlset>
`, from.UTC().Format(time.RFC3339), from.Add(time.Second).UTC().Format(time.RFC3339), r, change,
		from.Add(time.Second/2).UTC().Format(time.RFC3339Nano), b.rng.Uint64(), 100+r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.hub.URL, bytesReader(body.Bytes()))
	if err != nil {
		return fmt.Errorf("catchup: publish: %w", err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", b.pub.link)
	resp, err := b.pub.client.Do(req)
	if err != nil {
		return fmt.Errorf("catchup: publish: %w", err)
	}
	msg := drain(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("catchup: publish: hub answered %d: %s", resp.StatusCode, msg)
	}
	seq, _ := strconv.ParseUint(resp.Header.Get(wire.HeaderSeq), 10, 64)
	b.last.Store(seq)
	b.pub.next = from.Add(time.Second)
	return nil
}

func (b *catchUpBench) close() {
	for _, s := range b.subs {
		if s != nil {
			_ = s.srv.Close()
		}
	}
	if b.hub != nil {
		b.hub.close()
	}
}

func catchUpNotes(cfg Config) []string {
	return []string{
		fmt.Sprintf("catchup: two webhook subscriptions of one channel, rshub.coalesce=on (the 'hub' column) and off (the 'ceiling' column), offline (answering %d, retried every 20 ms) during %d notifications of one entry each touching %d resources, then back one after the other; time = back online → the last sequence received; bytes = request bodies received",
			offlineStatus, cfg.CatchUpNotifications, cfg.CatchUpResources),
	}
}
