package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

// hubProc is a hub process run in the test's process (server.Run, as
// cmd/hub runs it) on fixed loopback ports and a fixed data directory, so
// the test can stop it and start it again as it was.
type hubProc struct {
	t    *testing.T
	name string
	cfg  server.Config
	logs *testenv.Buffer
	url  string

	mu   sync.Mutex
	stop func()
}

func newHub(t *testing.T, name string, edit func(*server.Config)) *hubProc {
	cfg := server.Defaults()
	port := testenv.FreePort(t)
	cfg.Listen, cfg.DataDir, cfg.NATSListen = fmt.Sprintf("127.0.0.1:%d", port), t.TempDir(), "off"
	cfg.AllowNetworks, cfg.Retry, cfg.CoalesceThreshold = "127.0.0.0/8", "50ms,x2,max=1s,attempts=1000", 0
	cfg.Reconcile, cfg.LogLevel, cfg.StartupTimeout, cfg.ShutdownTimeout = 500*time.Millisecond, "warn", 30*time.Second, 5*time.Second
	cfg.LeafPasswordFile = leafPasswordFile(t) // the origin's and every edge's
	cfg.Middleware = hubtest.Validator(t)      // every answer against the admin API's contract
	edit(&cfg)
	h := &hubProc{t: t, name: name, cfg: cfg, logs: &testenv.Buffer{}, url: fmt.Sprintf("http://127.0.0.1:%d/", port)}
	h.Start()
	t.Cleanup(h.Stop)
	t.Cleanup(func() {
		if v := "Violation"; strings.Contains(h.logs.String(), v) { // the leaf link needs nothing LeafPermissions refuses
			t.Errorf("%s: the NATS server refused a subject: %s", name, tail(h.logs.String()[strings.Index(h.logs.String(), v):], 600))
		}
		if t.Failed() {
			t.Logf("---- %s ----\n%s", name, tail(h.logs.String(), 4000))
		}
	})
	return h
}

// leafPasswordFile writes the password of the test's leaf links to a file
// and returns its path.
func leafPasswordFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "leaf-password")
	if err := os.WriteFile(path, []byte("edge-link-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// Start runs the hub and waits until it serves.
func (h *hubProc) Start() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("hub", h.name)
	go func() { done <- server.Run(ctx, h.cfg, logger, func(server.Started) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		h.t.Fatalf("%s did not start: %v\n%s", h.name, err, h.logs.String())
	case <-time.After(60 * time.Second):
		cancel()
		h.t.Fatalf("%s not ready within 60s", h.name)
	}
	h.mu.Lock()
	h.stop = func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				h.t.Errorf("%s: %v", h.name, err)
			}
		case <-time.After(30 * time.Second):
			h.t.Errorf("%s did not stop within 30s", h.name)
		}
	}
	h.mu.Unlock()
}

// Stop shuts the hub down gracefully; a second Stop does nothing.
func (h *hubProc) Stop() {
	h.mu.Lock()
	stop := h.stop
	h.stop = nil
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// get returns the status and body of GET path on the hub.
func (h *hubProc) get(path string) (int, string) {
	resp, err := http.Get(h.url + strings.TrimPrefix(path, "/"))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// awaitReadyz waits until the hub's /readyz answers code with a body
// containing want.
func (h *hubProc) awaitReadyz(code int, want string, timeout time.Duration) string {
	h.t.Helper()
	var body string
	testenv.Eventually(h.t, timeout, func() bool {
		var c int
		c, body = h.get("readyz")
		return c == code && strings.Contains(body, want)
	}, "%s /readyz %d %q", h.name, code, want)
	return body
}

// linkProxy carries a leaf node link over TCP, counting its bytes and the
// connections it takes (the edge's dials), and can cut it (every
// connection closed, each new one taken and closed at once) and restore
// it.
type linkProxy struct {
	t      *testing.T
	addr   string
	target string
	bytes  atomic.Int64
	// dials counts the connections taken, carried or not; carried those
	// that reached the target.
	dials, carried atomic.Int64

	mu    sync.Mutex
	ln    net.Listener
	cut   bool
	conns map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *linkProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{t: t, target: target, ln: ln, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.dials.Add(1)
			go p.carry(c)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

// URL is the leaf URL an edge links to.
func (p *linkProxy) URL() string { return "nats-leaf://" + p.addr }

func (p *linkProxy) carry(c net.Conn) {
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut { // cut meanwhile
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.carried.Add(1)
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				p.bytes.Add(int64(n))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		dst.Close()
		src.Close()
	}
	go pipe(up, c)
	go pipe(c, up)
}

// Cut closes every connection and takes each new one only to close it.
func (p *linkProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore carries new connections again.
func (p *linkProxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// receiver is a webhook subscriber: it answers verification and records
// each delivered notification's number and log sequence, in arrival order.
type receiver struct {
	srv      *httptest.Server
	verified atomic.Bool
	mu       sync.Mutex
	got      []delivered
}

type delivered struct {
	n   int
	seq uint64
}

var locNum = regexp.MustCompile(`<loc>http://example\.com/n/(\d+)</loc>`)

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			r.verified.Store(true)
			_, _ = io.WriteString(w, req.URL.Query().Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(req.Body)
		seq, _ := strconv.ParseUint(req.Header.Get(wire.HeaderSeq), 10, 64)
		r.mu.Lock()
		for _, m := range locNum.FindAllSubmatch(body, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			r.got = append(r.got, delivered{n, seq})
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// subscribe subscribes the receiver to topic at hub and waits until it
// was verified.
func (r *receiver) subscribe(t *testing.T, h *hubProc, topic string) {
	t.Helper()
	resp, err := http.PostForm(h.url, url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {r.srv.URL + "/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe at %s: %d", h.name, resp.StatusCode)
	}
	testenv.Eventually(t, 10*time.Second, r.verified.Load, "verification of the subscription at %s", h.name)
}

// firsts returns the first delivery of every number, in arrival order
// (a redelivery of one in flight is allowed).
func (r *receiver) firsts() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[int]bool{}
	var out []delivered
	for _, d := range r.got {
		if !seen[d.n] {
			seen[d.n] = true
			out = append(out, d)
		}
	}
	return out
}

// events reads Server-Sent Events sessions at a hub, as a browser's
// EventSource does: a session the hub ends is opened again from the last
// event's id (Last-Event-ID). It records when each notification's sequence
// first arrived, and the end events.
type events struct {
	mu      sync.Mutex
	arrived map[uint64]time.Time
	order   []uint64
	lastID  string
	ends    []string // the data of each end event
}

func openEvents(t *testing.T, h *hubProc, channel string) *events {
	ctx, cancel := context.WithCancel(context.Background())
	e := &events{arrived: map[uint64]time.Time{}}
	first, done := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(done)
		opened := func(err error) {
			select { // the first session's outcome; later ones go unread
			case first <- err:
			default:
			}
		}
		for ctx.Err() == nil {
			if err := e.session(ctx, h.url+"events?since=0&channels="+channel, opened); err != nil {
				opened(err)
			}
			select { // the EventSource's retry
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	if err := <-first; err != nil {
		cancel()
		<-done
		t.Fatalf("events at %s: %v", h.name, err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// session reads one session until it ends, calling opened once it is
// open; an error means it did not open.
func (e *events) session(ctx context.Context, u string, opened func(error)) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	e.mu.Lock()
	if e.lastID != "" {
		req.Header.Set(wire.HeaderLastEventID, e.lastID)
	}
	e.mu.Unlock()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	opened(nil)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:") && event == wire.EventEnd:
			e.mu.Lock()
			e.ends = append(e.ends, strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			e.mu.Unlock()
		case strings.HasPrefix(line, "id:") && event == wire.EventNotification:
			id := strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			c, err := wire.ParseCursor(id)
			if err != nil {
				continue
			}
			e.mu.Lock()
			e.lastID = id
			if _, ok := e.arrived[c.Seq]; !ok {
				e.arrived[c.Seq] = time.Now()
				e.order = append(e.order, c.Seq)
			}
			e.mu.Unlock()
		}
	}
	return nil
}

// endings returns the data of the end events so far.
func (e *events) endings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ends)
}

// at returns when seq arrived.
func (e *events) at(seq uint64) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	at, ok := e.arrived[seq]
	return at, ok
}

// ordered reports whether sequences arrived in increasing order.
func (e *events) ordered() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.IsSorted(e.order)
}
