// Package edge_test runs an origin hub and two edge hubs on loopback (each
// with its own embedded NATS server, the edges linked to the origin's as
// leaf nodes through proxies the test can cut), and checks under a steady
// load that subscribers at the edges receive every notification the
// origin acknowledged, in order and at the origin's sequences, across a
// cut link, an edge that was down and an origin that was down; that
// readiness tells the truth meanwhile; and measures replication lag,
// bytes over the link and catch-up time (docs/edge.md). cluster_test.go
// does the same with processes: an origin on a three-node nats-server
// cluster, a cut link and a killed node.
//
// The measurement with a longer cut and another load:
//
//	go test ./integration/edge -run TestEdge -v -parallel 1 -edge.cut=5m -edge.rate=50
package edge_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

var (
	cutFor = flag.Duration("edge.cut", 3*time.Second, "how long the leaf link stays cut (and the origin stopped)")
	rate   = flag.Int("edge.rate", 50, "notifications per second the Source publishes")
	steady = flag.Duration("edge.steady", 4*time.Second, "how long the load runs before the cut, for lag and bytes")
)

const (
	topic   = "http://127.0.0.1:1/edge/topic"
	channel = "edge"
)

// post publishes notification n at h and returns the answer.
func post(h *hubProc, n int) (*http.Response, string, error) {
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(series.Notification(n)))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", "<"+topic+`>; rel="self", <`+h.url+`>; rel="hub"`)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

// ack is a publish the origin acknowledged.
type ack struct {
	n   int
	seq uint64
	at  time.Time
}

// source publishes notifications 0, 1, 2 … one after another at the
// rate, every tenth through an edge (forwarded to the origin), retrying a
// publish that was not acknowledged (same bytes, stored once).
type source struct {
	t      *testing.T
	origin *hubProc
	via    *hubProc
	mu     sync.Mutex
	acked  []ack
	stop   context.CancelFunc
	done   chan struct{}
}

func startSource(t *testing.T, origin, via *hubProc) *source {
	ctx, cancel := context.WithCancel(context.Background())
	s := &source{t: t, origin: origin, via: via, stop: cancel, done: make(chan struct{})}
	go s.run(ctx)
	t.Cleanup(s.Stop)
	return s
}

func (s *source) run(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		for attempt := 0; ; attempt++ {
			to := s.origin
			if (n%10 == 5) == (attempt%2 == 0) {
				to = s.via
			}
			resp, body, err := post(to, n)
			if err == nil && resp.StatusCode == http.StatusOK {
				seq, _ := strconv.ParseUint(resp.Header.Get(wire.HeaderSeq), 10, 64)
				s.mu.Lock()
				s.acked = append(s.acked, ack{n, seq, time.Now()})
				s.mu.Unlock()
				break
			}
			if err == nil && resp.StatusCode/100 == 4 {
				s.t.Errorf("publish %d at %s refused: %d %s", n, to.name, resp.StatusCode, body)
				return
			}
			select { // back off before publishing again
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Stop ends the load and waits for the publish in flight.
func (s *source) Stop() { s.stop(); <-s.done }

func (s *source) acks() []ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acked)
}

func channelsFile(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(f, []byte(`[{"topic":"`+topic+`","name":"`+channel+`","trust":"open"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitDelivered waits until r and e hold every acknowledged publish, then
// checks that r got them in order at the origin's sequences and that e's
// sequences arrived in order.
func waitDelivered(t *testing.T, name string, r *receiver, e *events, acks []ack, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, timeout, func() bool {
		got := r.firsts()
		if len(got) < len(acks) {
			return false
		}
		for _, a := range acks {
			if _, ok := e.at(a.seq); !ok {
				return false
			}
		}
		return true
	}, "%s: every acknowledged notification delivered", name)
	got := r.firsts()
	for i, a := range acks {
		if got[i].n != a.n || got[i].seq != a.seq {
			t.Fatalf("%s: webhook delivery %d is notification %d at sequence %d, want %d at %d (the origin's)", name, i, got[i].n, got[i].seq, a.n, a.seq)
		}
	}
	if !e.ordered() {
		t.Fatalf("%s: Server-Sent Events out of order", name)
	}
}

// An edge cut from its origin, an edge that was down and an origin that
// was down lose nothing under load: every subscriber at each edge ends
// with every acknowledged notification, in order, at the origin's
// sequences; live sessions stay open; readiness says what is stale.
func TestEdge_LinkCutUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	chans := channelsFile(t)
	leafPort := testenv.FreePort(t)
	origin := newHub(t, "origin", func(c *server.Config) {
		c.ChannelsFile, c.LeafListen = chans, fmt.Sprintf("127.0.0.1:%d", leafPort)
	})
	p1, p2 := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPort)), newProxy(t, fmt.Sprintf("127.0.0.1:%d", leafPort))
	edge := func(name string, p *linkProxy) *hubProc {
		return newHub(t, name, func(c *server.Config) {
			c.Upstream, c.UpstreamLeaf, c.NATSDomain = origin.url, p.URL(), name // the channels are the origin's
		})
	}
	e1, e2 := edge("edge1", p1), edge("edge2", p2)
	for _, e := range []*hubProc{e1, e2} {
		e.awaitReadyz(200, "ready", 30*time.Second)
	}
	r1, r2 := newReceiver(t), newReceiver(t)
	r1.subscribe(t, e1, topic)
	r2.subscribe(t, e2, topic)
	s1, s2 := openEvents(t, e1, channel), openEvents(t, e2, channel)

	// the idle link, then a steady load: lag and bytes over each link
	const idleFor = 2 * time.Second
	idle0 := p1.bytes.Load()
	waitFor(idleFor)
	idlePerSec := float64(p1.bytes.Load()-idle0) / idleFor.Seconds()
	src := startSource(t, origin, e2)
	bytes0, began := [2]int64{p1.bytes.Load(), p2.bytes.Load()}, time.Now()
	waitFor(*steady)
	steadyAcks := src.acks()
	bytesPer, netPer := [2]float64{}, [2]float64{}
	for i, p := range []*linkProxy{p1, p2} {
		b := float64(p.bytes.Load() - bytes0[i])
		bytesPer[i] = b / float64(len(steadyAcks))
		netPer[i] = (b - idlePerSec*time.Since(began).Seconds()) / float64(len(steadyAcks))
	}

	// edge1's link cut, edge2 down, under load
	p1.Cut()
	e2.Stop()
	body := e1.awaitReadyz(503, "stale since", 15*time.Second)
	t.Logf("edge1 /readyz with its link cut: %s", strings.TrimSpace(body))
	if code, body := e1.get("healthz"); code != 200 {
		t.Fatalf("edge1 /healthz with its link cut = %d %q, want 200 (a restart mends nothing)", code, body)
	}
	waitFor(*cutFor)
	if ends := s1.endings(); len(ends) > 0 {
		t.Fatalf("edge1's live session ended with its link cut: %q", ends)
	}
	restored := time.Now()
	beforeRestore := src.acks()
	p1.Restore()
	e2.Start()
	last := beforeRestore[len(beforeRestore)-1].seq
	for deadline := time.Now().Add(5 * time.Minute); ; waitFor(10 * time.Millisecond) { // poll with a deadline
		if _, ok := s1.at(last); ok {
			break
		}
		if time.Now().After(deadline) {
			_, ready := e1.get("readyz")
			t.Fatalf("edge1 did not catch up with sequence %d: /readyz %q, its live sessions ended: %q", last, ready, s1.endings())
		}
	}
	catchUp := time.Since(restored)
	e1.awaitReadyz(200, "ready", 30*time.Second)
	// edge2 was down: its mirror comes back at the NATS server's retry
	// backoff, which a loaded machine stretches past 30 s
	e2.awaitReadyz(200, "ready", 2*time.Minute)
	s2again := openEvents(t, e2, channel) // edge2's first session ended with it

	// the origin down: edges serve what they hold and refuse publishes
	origin.Stop()
	e1.awaitReadyz(503, "stale since", 15*time.Second)
	resp, msg, err := post(e1, 1<<20)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(msg, "not published") {
		t.Fatalf("publish at an edge with the origin down: %v %v %q, want 503 with Retry-After saying it was not published", err, resp, msg)
	}
	held := src.acks()
	replay := openEvents(t, e1, channel)
	testenv.Eventually(t, 10*time.Second, func() bool { _, ok := replay.at(held[len(held)-1].seq); return ok }, "replay at edge1 with the origin down")
	if code, _ := e1.get(wire.ChangeListPath(channel)); code != 200 {
		t.Fatalf("Change List at edge1 with the origin down: %d", code)
	}
	waitFor(*cutFor)
	originBack := time.Now()
	origin.Start()
	waitFor(time.Second) // load after the origin is back
	src.Stop()
	acks := src.acks()
	var resumed time.Duration // the origin's restart to edge1's first notification published after it
	for _, a := range acks {
		if a.at.After(originBack) {
			testenv.Eventually(t, 5*time.Minute, func() bool { _, ok := s1.at(a.seq); return ok }, "edge1 resumes after the origin's restart")
			at, _ := s1.at(a.seq)
			resumed = at.Sub(originBack)
			break
		}
	}
	waitDelivered(t, "edge1", r1, s1, acks, 5*time.Minute)
	waitDelivered(t, "edge2", r2, s2again, acks, 5*time.Minute)
	for _, h := range []*hubProc{origin, e1, e2} { // ready again after the origin's restart
		h.awaitReadyz(200, "ready", 30*time.Second)
	}
	if ends := s1.endings(); len(ends) > 0 {
		t.Logf("edge1's live sessions ended by the hub after the cuts (and resumed from their last event's id): %q", ends)
	}

	lags := make([][]time.Duration, 2)
	for i, e := range []*events{s1, s2} {
		for _, a := range steadyAcks {
			if at, ok := e.at(a.seq); ok {
				lags[i] = append(lags[i], max(0, at.Sub(a.at)))
			}
		}
	}
	t.Logf("load %d notifications/s, %d acknowledged (%d during the steady %v)", *rate, len(acks), len(steadyAcks), *steady)
	t.Logf("idle link: %.0f bytes/s; a notification's body: %d bytes", idlePerSec, len(series.Notification(len(acks))))
	for i := range 2 {
		t.Logf("edge%d: replication lag (origin's acknowledgement to the edge's Server-Sent Event) p50 %v p99 %v; %.0f bytes over the link per notification, %.0f beyond the idle link's",
			i+1, pct(lags[i], 50), pct(lags[i], 99), bytesPer[i], netPer[i])
	}
	t.Logf("catch-up after a %v leaf cut: %v; delivery at edge1 resumed %v after the origin's restart", *cutFor, catchUp.Round(time.Millisecond), resumed.Round(time.Millisecond))
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(100 * time.Microsecond)
}

// waitFor lets the load run for d: a phase of the scenario, not a wait for
// a condition.
func waitFor(d time.Duration) {
	<-time.After(d)
}
