package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// restartableHub is a hub on a fixed data directory and port that a test
// stops and starts again.
type restartableHub struct {
	t      *testing.T
	cfg    server.Config
	url    string
	cancel context.CancelFunc
	done   chan error
}

func newRestartableHub(t *testing.T) *restartableHub {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cfg := servertest.Config(t)
	cfg.Listen, cfg.AdminToken = addr, "sse-dashboard-token"
	h := &restartableHub{t: t, cfg: cfg}
	t.Cleanup(h.stop)
	return h
}

func (h *restartableHub) start() {
	h.t.Helper()
	logger := slog.New(slog.NewTextHandler(testWriter{h.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, h.cfg, logger, func(s server.Started) { ready <- s }) }()
	select {
	case s := <-ready:
		h.url, h.cancel, h.done = s.HubURL, cancel, done
	case err := <-done:
		cancel()
		h.t.Fatalf("hub exited at start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		h.t.Fatal("hub not ready within 60s")
	}
}

func (h *restartableHub) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("hub: %v", err)
		}
	case <-time.After(30 * time.Second):
		h.t.Error("hub did not stop within 30s")
	}
	h.cancel = nil
}

// noWebSocketProxy forwards everything to the hub but refuses WebSocket
// handshakes, as some proxies do; while the hub is down it drops the
// connection (a network error to the browser). It records the
// Last-Event-ID of each /events request.
type noWebSocketProxy struct {
	srv *httptest.Server

	mu          sync.Mutex
	lastEventID []string
}

func newNoWebSocketProxy(t *testing.T, hubURL string) *noWebSocketProxy {
	target, err := url.Parse(hubURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }
	p := &noWebSocketProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case wire.PathWebSocket:
			http.Error(w, "WebSockets are blocked here", http.StatusForbidden)
			return
		case wire.PathEvents:
			p.mu.Lock()
			p.lastEventID = append(p.lastEventID, r.Header.Get(wire.HeaderLastEventID))
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// sawLastEventID reports whether a request resumed at seq (a decimal
// sequence), whatever the log's epoch in its Last-Event-ID.
func (p *noWebSocketProxy) sawLastEventID(seq string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, got := range p.lastEventID {
		if c, err := wire.ParseCursor(got); err == nil && fmt.Sprint(c.Seq) == seq {
			return true
		}
	}
	return false
}

// TestDashboard_FallsBackToEventsAndResumesAfterHubRestart opens the
// dashboard through a proxy that blocks WebSockets: the feed runs on
// Server-Sent Events. The hub is stopped and started again on the same
// data directory and port; the page's EventSource reconnects by itself
// with Last-Event-ID and shows what was published meanwhile, each
// notification once.
func TestDashboard_FallsBackToEventsAndResumesAfterHubRestart(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := newRestartableHub(t)
	h.start()
	topic := h.url + "topics/demo"
	dh := &dashHub{url: h.url, token: h.cfg.AdminToken}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	window := func(i int) (time.Time, time.Time) {
		return t0.Add(time.Duration(i) * time.Minute), t0.Add(time.Duration(i+1) * time.Minute)
	}
	// The log's sequence is shared by every channel, the hub's framework
	// channels included (demo-framework announces demo's creation), so the
	// seq of each notification is read from the channel's state.
	var seqs []string
	publish := func(i int) {
		from, until := window(i)
		dh.publish(t, topic, from, until, dashEntry{fmt.Sprintf("https://library.example.org/books/%d", i), "updated"})
		_, body := dh.do(t, http.MethodGet, "/admin/channels/demo", "", nil, http.Header{"Authorization": {"Bearer " + dh.token}})
		var v struct {
			State struct {
				LastSeq uint64 `json:"lastSeq"`
			} `json:"state"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil || v.State.LastSeq == 0 {
			t.Fatalf("GET /admin/channels/demo: %v %s", err, body)
		}
		seqs = append([]string{fmt.Sprint(v.State.LastSeq)}, seqs...)
	}
	for i := range 3 {
		publish(i)
	}
	proxy := newNoWebSocketProxy(t, h.url)

	b := newDashBrowser(t, 3*time.Minute)
	b.run("open the dashboard through the proxy", chromedp.Navigate(proxy.srv.URL+"/dashboard/#token="+h.cfg.AdminToken))
	b.waitFor("the feed live over Server-Sent Events with 3 notifications", 30*time.Second, `document.body.dataset.feed === "sse" &&
		document.querySelector("#ws-status").textContent.startsWith("feed: live") &&
		document.querySelectorAll("#feed li.note").length === 3`)
	b.screenshot("8_sse_fallback")

	h.stop()
	b.waitFor("the page noticing the hub is gone", 30*time.Second, `!document.querySelector("#ws-status").textContent.startsWith("feed: live")`)
	h.start()
	for i := 3; i < 5; i++ {
		publish(i)
	}
	b.waitFor("the notifications published meanwhile", 60*time.Second, `document.querySelectorAll("#feed li.note").length >= 5 &&
		document.querySelector("#ws-status").textContent.startsWith("feed: live")`)
	shown, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#feed li.note")).map(li => li.dataset.seq)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(shown, ",") != strings.Join(seqs, ",") {
		t.Errorf("feed holds seqs %v, want %v each once", shown, seqs)
	}
	// The page resumes from the last record it had before the hub stopped:
	// the third notification, or a framework record after it (the stream
	// carries them; the feed leaves them out).
	resumed := false
	for id := seqs[len(seqs)-3]; !resumed && id != seqs[len(seqs)-4]; id = fmt.Sprint(atoi(t, id) + 1) {
		resumed = proxy.sawLastEventID(id)
	}
	if !resumed {
		t.Errorf("no /events request with Last-Event-ID 3 (requests: %q): the EventSource did not resume by itself", proxy.lastEventID)
	}
	b.screenshot("9_sse_resumed")
	for _, e := range b.pageErrors() { // the admin API polls fail while the hub is down
		t.Logf("page error: %s", e)
	}
}

// atoi parses a decimal sequence number.
func atoi(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("seq %q: %v", s, err)
	}
	return n
}
