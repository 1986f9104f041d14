package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clusterAdminToken is the hubs' admin API token: only loopback listens.
const clusterAdminToken = "rshub-bench-cluster"

// clusterTopology is one life of the cluster scenario's processes: three
// nats-server processes forming a JetStream cluster, one redis-server and
// the hubs sharing them, as examples/cluster/cluster.sh starts them.
type clusterTopology struct {
	bins     clusterBinaries
	dir      string
	nats     []*proc
	natsURLs []string
	redis    *proc
	redisURL string
	hubs     []*proc  // by hub number; nil when not started
	hubURLs  []string // by hub number
	hubArgs  []string // common hub flags
	logs     string   // directory of the processes' output files, "" for none
}

// logPath returns the output file of process name in this life, "" when
// outputs are not kept.
func (t *clusterTopology) logPath(name string) string {
	if t.logs == "" {
		return ""
	}
	return filepath.Join(t.logs, filepath.Base(t.dir)+"-"+name+".log")
}

// clusterChannel is one channel of the scenario, as the hubs' --channels
// file defines it.
type clusterChannel struct {
	Topic string `json:"topic"`
	Name  string `json:"name"`
	Trust string `json:"trust"`
}

// clusterChannels returns n open channels on an unreachable topic host
// (publishes are fat pings, never fetched).
func clusterChannels(n int) []clusterChannel {
	out := make([]clusterChannel, n)
	for i := range out {
		name := "c" + strconv.Itoa(i)
		out[i] = clusterChannel{Topic: "http://127.0.0.1:1/bench/" + name, Name: name, Trust: "open"}
	}
	return out
}

// startClusterInfra starts NATS and Redis in a fresh directory under
// base and prepares the hubs' flags; no hub runs yet.
func startClusterInfra(ctx context.Context, base string, bins clusterBinaries, cfg Config, chans []clusterChannel) (_ *clusterTopology, err error) {
	dir, err := os.MkdirTemp(base, "life-*")
	if err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	t := &clusterTopology{bins: bins, dir: dir, logs: cfg.ClusterLogs}
	if t.logs != "" {
		if err := os.MkdirAll(t.logs, 0o755); err != nil {
			return nil, fmt.Errorf("cluster logs: %w", err)
		}
	}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	ports, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[3+i]))
		t.natsURLs = append(t.natsURLs, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	for i := range 3 {
		name := fmt.Sprintf("nats%d", i)
		p, err := startProc(name, t.logPath(name), bins.nats, "-a", "127.0.0.1", "-p", strconv.Itoa(ports[i]),
			"-js", "-sd", filepath.Join(dir, fmt.Sprintf("nats%d", i)), "--name", fmt.Sprintf("n%d", i),
			"--cluster_name", "rshub-bench", "--cluster", routes[i], "--routes", strings.Join(routes, ","))
		if err != nil {
			return nil, err
		}
		t.nats = append(t.nats, p)
	}
	redisPort := ports[6]
	if t.redis, err = startProc("redis", t.logPath("redis"), bins.redis, "--bind", "127.0.0.1", "--port", strconv.Itoa(redisPort),
		"--dir", dir, "--save", "", "--appendonly", "no"); err != nil {
		return nil, err
	}
	t.redisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", redisPort)
	for i, p := range t.nats {
		if err := p.waitPort(ctx, fmt.Sprintf("127.0.0.1:%d", ports[i]), 30*time.Second); err != nil {
			return nil, err
		}
	}
	if err := t.redis.waitPort(ctx, fmt.Sprintf("127.0.0.1:%d", redisPort), 30*time.Second); err != nil {
		return nil, err
	}
	b, err := json.Marshal(chans)
	if err != nil {
		return nil, fmt.Errorf("channels file: %w", err)
	}
	chanFile := filepath.Join(dir, "channels.json")
	if err := os.WriteFile(chanFile, b, 0o600); err != nil {
		return nil, fmt.Errorf("channels file: %w", err)
	}
	// Every hub names hub 0 in rel="hub", as hubs behind one load
	// balancer name its URL.
	t.hubURLs = []string{fmt.Sprintf("http://127.0.0.1:%d/", ports[7])}
	t.hubArgs = []string{"--hub-url", t.hubURLs[0],
		"--nats-url", strings.Join(t.natsURLs, ","), "--nats-replicas", "3", "--redis-url", t.redisURL,
		"--allow-networks", "127.0.0.0/8", "--channels", chanFile,
		"--claim-ttl", cfg.ClusterClaimTTL.String(), "--reconcile", clusterReconcile(cfg).String(),
		"--retry", "100ms,x2,max=2s,attempts=100",
		"--admin-token", clusterAdminToken, "--log-level", "warn", "--log-format", "text"}
	if cfg.PerHost > 0 {
		t.hubArgs = append(t.hubArgs, "--per-host", strconv.Itoa(cfg.PerHost))
	}
	return t, nil
}

// clusterReconcile is the hubs' --reconcile: a fifth of the claim TTL, as
// in examples/cluster (10 s and 2 s).
func clusterReconcile(cfg Config) time.Duration {
	return max(cfg.ClusterClaimTTL/5, 200*time.Millisecond)
}

// startHub starts hub i (hub 0 on the port its URL names, the others on
// fresh ports) and waits until it is ready.
func (t *clusterTopology) startHub(ctx context.Context, i int) error {
	for len(t.hubs) <= i {
		t.hubs = append(t.hubs, nil)
	}
	for len(t.hubURLs) <= i {
		port, err := freePort()
		if err != nil {
			return err
		}
		t.hubURLs = append(t.hubURLs, fmt.Sprintf("http://127.0.0.1:%d/", port))
	}
	listen := strings.TrimSuffix(strings.TrimPrefix(t.hubURLs[i], "http://"), "/")
	args := append([]string{"--listen", listen, "--data-dir", filepath.Join(t.dir, fmt.Sprintf("hub%d", i))}, t.hubArgs...)
	name := fmt.Sprintf("hub%d", i)
	p, err := startProc(name, t.logPath(name), t.bins.hub, args...)
	if err != nil {
		return err
	}
	t.hubs[i] = p
	return p.waitHTTP(ctx, t.hubURLs[i]+"readyz", 2*time.Minute)
}

// hubsCPU is the CPU time the running hubs have used.
func (t *clusterTopology) hubsCPU() (time.Duration, error) {
	var sum time.Duration
	for _, h := range t.hubs {
		if h == nil || h.exited() {
			continue
		}
		d, err := procCPU(h.pid())
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// hubsRSS is the resident memory of the running hubs, summed.
func (t *clusterTopology) hubsRSS() uint64 {
	var sum uint64
	for _, h := range t.hubs {
		if h != nil && !h.exited() {
			sum += procRSS(h.pid())
		}
	}
	return sum
}

// logTails logs the end of every hub's output (their warnings and
// errors: the hubs log at warn).
func (t *clusterTopology) logTails(lg *slog.Logger) {
	for _, h := range t.hubs {
		if h != nil {
			lg.Info("cluster: hub output", "hub", h.name, "tail", h.out.String())
		}
	}
}

// close stops every process and removes the directory.
func (t *clusterTopology) close() {
	for _, h := range t.hubs {
		h.stop(10 * time.Second)
	}
	t.redis.stop(10 * time.Second)
	for _, n := range t.nats {
		n.stop(10 * time.Second)
	}
	_ = os.RemoveAll(t.dir)
}

// freePorts returns n distinct loopback TCP ports that were free a moment
// ago.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for len(out) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}
