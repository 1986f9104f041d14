// Package faults injects faults into a running hub's dependencies under
// publish and delivery load (its NATS connection closed from the server
// side, the NATS server restarted, Redis restarted) and checks that the hub
// heals by itself and that every acknowledged notification reaches every
// subscriber in order.
package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
	hubserver "github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// natsServer is a real NATS server with JetStream, run in the test process
// so the test can kick clients, change its limits and restart it.
type natsServer struct {
	t    *testing.T
	opts server.Options
	mu   sync.Mutex
	srv  *server.Server
}

func startNATS(t *testing.T) *natsServer {
	t.Helper()
	n := &natsServer{t: t, opts: server.Options{
		ServerName: "faults", Host: "127.0.0.1", Port: testenv.FreePort(t),
		JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
	}}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.opts.Port) }

func (n *natsServer) start() {
	n.t.Helper()
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		n.t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		n.t.Fatal("nats-server not ready")
	}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
}

func (n *natsServer) stop() {
	n.mu.Lock()
	srv := n.srv
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// clients returns the IDs of the connections named name.
func (n *natsServer) clients(name string) []uint64 {
	n.mu.Lock()
	srv := n.srv
	n.mu.Unlock()
	cz, err := srv.Connz(&server.ConnzOptions{Limit: 1024})
	if err != nil {
		n.t.Fatal(err)
	}
	var ids []uint64
	for _, c := range cz.Conns {
		if c.Name == name {
			ids = append(ids, c.Cid)
		}
	}
	return ids
}

// natsProcess is a nats-server process whose configuration file the test
// rewrites and reloads (SIGHUP).
type natsProcess struct {
	t       *testing.T
	proc    *testproc.Proc
	conf    string
	port    int
	monitor int
	store   string
}

func startNATSProcess(t *testing.T) *natsProcess {
	t.Helper()
	bin, err := testproc.Build(t.TempDir(), "nats-server", "github.com/nats-io/nats-server/v2")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := &natsProcess{t: t, conf: filepath.Join(dir, "nats.conf"), port: testenv.FreePort(t), monitor: testenv.FreePort(t), store: filepath.Join(dir, "js")}
	n.write(server.MAX_CONTROL_LINE_SIZE)
	n.proc = testproc.Start(t, "nats-server", bin, "-c", n.conf)
	testproc.WaitPort(t, n.proc, n.port, 30*time.Second)
	return n
}

func (n *natsProcess) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

func (n *natsProcess) write(maxControlLine int) {
	n.t.Helper()
	conf := fmt.Sprintf("listen: \"127.0.0.1:%d\"\nhttp: \"127.0.0.1:%d\"\nmax_control_line: %d\njetstream {\n  store_dir: %q\n}\n",
		n.port, n.monitor, maxControlLine, n.store)
	if err := os.WriteFile(n.conf, []byte(conf), 0o600); err != nil {
		n.t.Fatal(err)
	}
}

// reload sets max_control_line and makes the server reload its file.
func (n *natsProcess) reload(maxControlLine int) {
	n.t.Helper()
	n.write(maxControlLine)
	if !n.proc.Notify(syscall.SIGHUP) {
		n.t.Fatal("nats-server is not running")
	}
}

// clients counts the connections named name, from the monitoring port.
func (n *natsProcess) clients(name string) int {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connz?limit=1024", n.monitor))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var cz struct {
		Conns []struct {
			Name string `json:"name"`
		} `json:"connections"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cz); err != nil {
		return -1
	}
	count := 0
	for _, c := range cz.Conns {
		if c.Name == name {
			count++
		}
	}
	return count
}

// hub is a hub process under load: a publisher and subscribers.
type hub struct {
	t       *testing.T
	base    string // http://127.0.0.1:port/
	topic   string
	recv    map[string]*series.Receiver
	mu      sync.Mutex
	acked   []int // acknowledged notification numbers, in order
	lastAck time.Time
}

// startHub runs a hub on the given NATS server (and Redis, when redisURL
// is set) with three webhook subscribers.
func startHub(t *testing.T, natsURL, redisURL string) *hub {
	t.Helper()
	st := servertest.Start(t, nil, func(c *hubserver.Config) {
		c.NATSURL, c.RedisURL = natsURL, redisURL
		c.Retry = "50ms,x2,max=1s,attempts=200"
		c.ClaimTTL, c.Reconcile = 3*time.Second, 500*time.Millisecond
	})
	h := &hub{t: t, base: st.HubURL, topic: "http://" + st.Addr + "/topics/demo", recv: map[string]*series.Receiver{}}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for i := range 3 {
		name := fmt.Sprintf("s%d", i)
		r := &series.Receiver{}
		h.recv[name] = r
		mux.Handle("/"+name, r)
		resp, err := http.PostForm(h.base, url.Values{"hub.mode": {"subscribe"}, "hub.topic": {h.topic}, "hub.callback": {srv.URL + "/" + name}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("subscribe %s: %d", name, resp.StatusCode)
		}
	}
	// a subscription starts at the log's end as it was before its
	// verification request: publish once every callback has echoed one
	testproc.WaitFor(t, 30*time.Second, "every subscription verified", func() (bool, string) {
		for name, r := range h.recv {
			if !r.Verified() {
				return false, name + " not verified yet"
			}
		}
		return true, ""
	})
	h.publish(0, time.Minute)
	h.waitAll([]int{0}, 30*time.Second)
	return h
}

// publish posts notification n until the hub acknowledges it (a retry
// sends the same bytes, which the hub stores once). A 4xx fails the test.
func (h *hub) publish(n int, within time.Duration) {
	body := series.Notification(n)
	deadline := time.Now().Add(within)
	client := &http.Client{Timeout: 10 * time.Second}
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodPost, h.base, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+h.topic+`>; rel="self", <`+h.base+`>; rel="hub"`)
		resp, err := client.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK:
				h.mu.Lock()
				h.acked = append(h.acked, n)
				h.lastAck = time.Now()
				h.mu.Unlock()
				return
			case resp.StatusCode == http.StatusServiceUnavailable:
				if resp.Header.Get("Retry-After") == "" {
					h.t.Errorf("publish %d: 503 without Retry-After: %s", n, msg)
				}
			default:
				h.t.Errorf("publish %d: %d %s", n, resp.StatusCode, msg)
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // back off before retrying, as a Source would
	}
	h.t.Errorf("publish %d never acknowledged within %s", n, within)
}

// ackedAfter reports when the first publish after t was acknowledged.
func (h *hub) ackCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.acked)
}

// ready reports whether /readyz answers 200.
func (h *hub) ready() bool {
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Get(h.base + "readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitAll waits until every receiver holds every number in want, in order.
func (h *hub) waitAll(want []int, timeout time.Duration) time.Duration {
	h.t.Helper()
	start := time.Now()
	testproc.WaitFor(h.t, timeout, "every acknowledged notification delivered", func() (bool, string) {
		names := make([]string, 0, len(h.recv))
		for name := range h.recv {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if _, ordered := h.recv[name].Check(); !ordered {
				h.t.Fatalf("%s received notifications out of order", name)
			}
			if missing := h.recv[name].Missing(want); len(missing) > 0 {
				return false, fmt.Sprintf("%s misses %d of %d", name, len(missing), len(want))
			}
		}
		return true, ""
	})
	return time.Since(start)
}
