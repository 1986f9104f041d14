// Package cluster_test runs several hub processes over a three-node NATS
// JetStream cluster and Redis, kills and restarts parts of it under load,
// and checks that every subscriber receives every acknowledged notification
// in order.
package cluster_test

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

const (
	topic      = "http://127.0.0.1:1/cluster/topic"
	adminToken = "cluster-admin-token"
)

// cluster is three NATS nodes, one Redis and up to three hubs.
type cluster struct {
	t        *testing.T
	dir      string
	nats     []*testproc.Proc
	natsPort []int
	redis    *testproc.Proc
	redisURL string
	hubs     []*testproc.Proc
	hubArgs  [][]string // binary and arguments of each hub
	hubURLs  []string   // each hub's own base URL
	// checked are validating proxies (hubtest.Contract.Proxy) in front of
	// each hub, where the test's publishes, subscribes, WebSocket and admin
	// requests go: every answer of those is checked against the contract.
	checked []string
	hubURL  string // the hub URL Sources name (hub 0's, as behind a load balancer)
}

func startCluster(t *testing.T) *cluster {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	hubBin, err := testproc.Build(bin, "hub", "./cmd/hub")
	if err != nil {
		t.Fatal(err)
	}
	natsBin, err := testproc.Build(bin, "nats-server", "github.com/nats-io/nats-server/v2")
	if err != nil {
		t.Fatal(err)
	}
	redisBin := "redis-server"
	c := &cluster{t: t, dir: dir}

	routes := make([]int, 3)
	c.natsPort = make([]int, 3)
	for i := range 3 {
		c.natsPort[i], routes[i] = testenv.FreePort(t), testenv.FreePort(t)
	}
	var routeURLs []string
	for _, r := range routes {
		routeURLs = append(routeURLs, fmt.Sprintf("nats://127.0.0.1:%d", r))
	}
	for i := range 3 {
		p := testproc.Start(t, fmt.Sprintf("nats%d", i), natsBin, "-a", "127.0.0.1", "-p", strconv.Itoa(c.natsPort[i]),
			"-js", "-sd", filepath.Join(dir, fmt.Sprintf("nats%d", i)), "--name", fmt.Sprintf("n%d", i),
			"--cluster_name", "rshub", "--cluster", routeURLs[i], "--routes", strings.Join(routeURLs, ","))
		c.nats = append(c.nats, p)
	}
	redisPort := testenv.FreePort(t)
	c.redis = testproc.Start(t, "redis", redisBin, "--bind", "127.0.0.1", "--port", strconv.Itoa(redisPort),
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	c.redisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", redisPort)
	for i, p := range c.nats {
		testproc.WaitPort(t, p, c.natsPort[i], 20*time.Second)
	}
	testproc.WaitPort(t, c.redis, redisPort, 20*time.Second)

	chans := filepath.Join(dir, "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"topic":"`+topic+`","name":"cluster","trust":"open"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var natsURLs []string
	for _, p := range c.natsPort {
		natsURLs = append(natsURLs, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	contract := hubtest.LoadContract(t)
	ports := []int{testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)}
	c.hubURL = fmt.Sprintf("http://127.0.0.1:%d/", ports[0])
	for i := range 3 {
		c.hubURLs = append(c.hubURLs, fmt.Sprintf("http://127.0.0.1:%d/", ports[i]))
		c.checked = append(c.checked, contract.Proxy(t, c.hubURLs[i]))
		c.hubArgs = append(c.hubArgs, []string{hubBin,
			"--listen", fmt.Sprintf("127.0.0.1:%d", ports[i]), "--hub-url", c.hubURL,
			"--nats-url", strings.Join(natsURLs, ","), "--nats-replicas", "3", "--redis-url", c.redisURL,
			"--allow-networks", "127.0.0.0/8", "--channels", chans,
			"--claim-ttl", "3s", "--reconcile", "500ms", "--retry", "50ms,x2,max=1s,attempts=200",
			"--admin-token", adminToken, "--log-format", "json"})
	}
	return c
}

func (c *cluster) startHub(i int) {
	for len(c.hubs) <= i {
		c.hubs = append(c.hubs, nil)
	}
	args := c.hubArgs[i]
	c.hubs[i] = testproc.Start(c.t, fmt.Sprintf("hub%d", i), args[0], args[1:]...)
	testproc.WaitHTTP(c.t, c.hubs[i], c.hubURLs[i]+"readyz", 90*time.Second)
}

func (c *cluster) dumpLogs() {
	for _, p := range append(append(append([]*testproc.Proc{}, c.hubs...), c.nats...), c.redis) {
		if p != nil {
			c.t.Logf("---- %s ----\n%s", p.Name, p.Output(3000))
		}
	}
}

// publisher posts a contiguous series of notifications, one entry each,
// retrying a failed publish (same bytes, so the hub deduplicates) on the
// next live hub.
type publisher struct {
	c      *cluster
	rotate bool // spread publishes over every live hub (else hub 0 first)
	mu     sync.Mutex
	acked  []int
	down   map[int]bool
}

func (p *publisher) publish(t *testing.T, n int) {
	body := series.Notification(n)
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		i := attempt % len(p.c.checked) // pinned to hub 0 while it is up
		if p.rotate {
			i = (n + attempt) % len(p.c.checked)
		}
		p.mu.Lock()
		down := p.down[i]
		p.mu.Unlock()
		if down {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, p.c.checked[i], strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+topic+`>; rel="self", <`+p.c.hubURL+`>; rel="hub"`)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err == nil {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				p.mu.Lock()
				p.acked = append(p.acked, n)
				p.mu.Unlock()
				return
			}
			if resp.StatusCode/100 == 4 {
				t.Errorf("publish %d refused: %d %s", n, resp.StatusCode, msg)
				return
			}
		}
		time.Sleep(100 * time.Millisecond) // back off before retrying a failed publish
	}
	t.Errorf("publish %d never acknowledged", n)
}

func (p *publisher) markDown(i int, down bool) {
	p.mu.Lock()
	p.down[i] = down
	p.mu.Unlock()
}

// subscribe registers callbacks, each through the given hub, and waits
// until the hub lists them active.
func subscribe(t *testing.T, c *cluster, srv *httptest.Server, names []string, via func(i int) int) {
	for i, name := range names {
		form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {srv.URL + "/" + name}}
		resp, err := http.PostForm(c.checked[via(i)], form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("subscribe %s: %d", name, resp.StatusCode)
		}
	}
}

// waitAll waits until every receiver holds every number in want.
func waitAll(t *testing.T, c *cluster, recv map[string]*series.Receiver, want []int, timeout time.Duration) time.Duration {
	start := time.Now()
	ok := false
	deadline := start.Add(timeout)
	for time.Now().Before(deadline) && !ok {
		ok = true
		for _, r := range recv {
			if len(r.Missing(want)) > 0 {
				ok = false
				break
			}
		}
		if !ok {
			time.Sleep(20 * time.Millisecond) // poll interval with a deadline
		}
	}
	if !ok {
		for name, r := range recv {
			if missing := r.Missing(want); len(missing) > 0 {
				sort.Ints(missing)
				t.Errorf("%s misses %d acknowledged notifications, first %v", name, len(missing), missing[:min(10, len(missing))])
			}
		}
		c.dumpLogs()
		t.FailNow()
	}
	return time.Since(start)
}

func TestCluster_FailoverLosesNothingAndKeepsOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster, Redis and three hubs")
	}
	c := startCluster(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	recv := map[string]*series.Receiver{}
	newRecv := func(name string) {
		recv[name] = &series.Receiver{}
		mux.Handle("/"+name, recv[name])
	}
	pub := &publisher{c: c, down: map[int]bool{}}

	// phase 1: one hub delivers to every subscriber
	c.startHub(0)
	pub.down[1], pub.down[2] = true, true
	var one []string
	for i := range 6 {
		one = append(one, fmt.Sprintf("one%d", i))
		newRecv(one[i])
	}
	subscribe(t, c, srv, one, func(int) int { return 0 })
	waitActive(t, c, 6)
	const burst = 200
	start := time.Now()
	for n := 0; n < burst; n++ {
		pub.publish(t, n)
	}
	oneRecv := map[string]*series.Receiver{}
	for _, n := range one {
		oneRecv[n] = recv[n]
	}
	waitAll(t, c, oneRecv, pub.acked, 60*time.Second)
	oneHub := time.Since(start)
	t.Logf("1 hub: %d notifications x %d subscribers delivered in %v (%.0f deliveries/s)", burst, len(one), oneHub, float64(burst*len(one))/oneHub.Seconds())

	// phase 2: three hubs, subscriptions taken through each in turn
	c.startHub(1)
	c.startHub(2)
	pub.markDown(1, false)
	pub.markDown(2, false)
	var three []string
	for i := range 6 {
		three = append(three, fmt.Sprintf("three%d", i))
		newRecv(three[i])
	}
	subscribe(t, c, srv, three, func(i int) int { return i % 3 })
	waitActive(t, c, 12)
	// a WebSocket client on hub 2 sees what is published through the others
	ws := dialWS(t, c.checked[2])
	start = time.Now()
	base := burst
	for n := base; n < base+burst; n++ {
		pub.publish(t, n)
	}
	// every subscriber of the channel (phase 1's six, owned by hub 0, and
	// these six, spread over the three hubs) receives this burst
	pub.mu.Lock()
	acked := append([]int(nil), pub.acked...)
	pub.mu.Unlock()
	waitAll(t, c, recv, acked[burst:], 60*time.Second)
	threeHubs := time.Since(start)
	t.Logf("3 hubs: %d notifications x %d subscribers delivered in %v (%.0f deliveries/s)", burst, len(recv), threeHubs, float64(burst*len(recv))/threeHubs.Seconds())
	ws.expect(t, acked[burst:], 30*time.Second)

	// phase 3: publish under load through every hub in turn; kill hub 1,
	// restart a NATS node, restart Redis
	pub.rotate = true
	const load = 900
	first := base + burst
	var killedAt time.Time
	for k := 0; k < load; k++ {
		n := first + k
		switch k {
		case load / 4:
			killedAt = time.Now()
			pub.markDown(1, true)
			c.hubs[1].Kill()
			t.Logf("hub 1 killed with SIGKILL after %d notifications", k)
		case load / 2:
			c.nats[2].Signal(syscall.SIGTERM)
			c.nats[2].Restart(t)
			t.Logf("NATS node 2 restarted after %d notifications", k)
		case 3 * load / 4:
			c.redis.Signal(syscall.SIGTERM)
			c.redis.Restart(t)
			t.Logf("Redis restarted after %d notifications", k)
		}
		pub.publish(t, n)
	}
	pub.mu.Lock()
	acked = append([]int(nil), pub.acked...)
	pub.mu.Unlock()
	drain := waitAll(t, c, recv, acked[2*burst:], 120*time.Second)
	t.Logf("after the last publish every subscriber had every acknowledged notification within %v", drain)

	// takeover: subscriptions taken through hub 1 were delivered by it
	var takeover time.Duration
	for i, name := range three {
		if i%3 != 1 {
			continue
		}
		if s := recv[name].StallAfter(killedAt); s > takeover {
			takeover = s
		}
	}
	t.Logf("takeover of hub 1's subscriptions: next delivery %v after the kill (claim TTL 3s)", takeover)
	if takeover < 0 {
		t.Errorf("hub 1's subscriptions never resumed")
	}
	for name, r := range recv {
		if _, ordered := r.Check(); !ordered {
			t.Errorf("%s received notifications out of order", name)
		}
	}
	// only what was acknowledged or retried was delivered
	for name, r := range recv {
		got, _ := r.Check()
		for n := range got {
			if n < 0 || n >= first+load {
				t.Errorf("%s received unknown notification %d", name, n)
			}
		}
	}
}

// waitActive waits until the store lists n active subscriptions.
func waitActive(t *testing.T, c *cluster, n int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() bool { return countActive(c) >= n }, "%d subscriptions never became active", n)
}

// countActive counts active subscriptions through hub 0's admin API.
func countActive(c *cluster) int {
	req, _ := http.NewRequest(http.MethodGet, c.checked[0]+"admin/subscriptions", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var subs []struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&subs); err != nil {
		return 0
	}
	n := 0
	for _, s := range subs {
		if s.State == "active" {
			n++
		}
	}
	return n
}
