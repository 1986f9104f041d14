package edge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

// natsNodeConf is a node of the origin's NATS cluster as an operator
// configures it for edges: a JetStream domain (the edges' --upstream-domain)
// and a leafnodes listener that advertises nothing, so that an edge dials
// only the URLs it was given (here the test's proxies); its users are the
// ones docs/usage.md gives (embednats.AuthorizationConf), the passwords
// the variables it names, set at the file's top (nats-server looks there
// before the environment, which a parallel test cannot set).
const natsNodeConf = `RSHUB_HUB_PASSWORD: hub-secret
RSHUB_READ_PASSWORD: read-secret
RSHUB_LEAF_PASSWORD: edge-link-secret
server_name: n%d
listen: 127.0.0.1:%d
jetstream { store_dir: %q, domain: rshub }
cluster { name: origin, listen: 127.0.0.1:%d, routes: [%s] }
leafnodes { listen: 127.0.0.1:%d, no_advertise: true }
%s`

// active is how many connections the proxy carries.
func (p *linkProxy) active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// An edge hub process linked to an origin whose NATS is a three-node
// cluster (processes, the origin hub a process on it) loses nothing under
// load when its link is cut and restored and when the cluster node its leaf
// link is on, the log's stream leader, is killed and restarted: the leaf
// dials another node, the mirror follows the stream's new leader, and the
// subscriber gets every acknowledged notification in order at the origin's
// sequences.
func TestEdge_OriginClusterProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hubBin, natsBin := bins.hub, bins.natsServer
	var client, route, leaf [3]int
	var routes, natsURLs []string
	for i := range 3 {
		client[i], route[i], leaf[i] = testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", route[i]))
		natsURLs = append(natsURLs, fmt.Sprintf("nats://%s:hub-secret@127.0.0.1:%d", embednats.HubUser, client[i]))
	}
	var nodes [3]*testproc.Proc
	for i := range 3 {
		conf := filepath.Join(dir, fmt.Sprintf("n%d.conf", i))
		text := fmt.Sprintf(natsNodeConf, i, client[i], filepath.Join(dir, fmt.Sprintf("n%d", i)), route[i], strings.Join(routes, ", "), leaf[i],
			embednats.AuthorizationConf(wire.Stream, wire.SubjectPrefix, server.DefaultDomain, embednats.DefaultReadUser, []string{kvstore.ChannelsStream("")}))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		nodes[i] = testproc.Start(t, fmt.Sprintf("nats%d", i), natsBin, "-c", conf)
	}
	for i, n := range nodes {
		testproc.WaitPort(t, n, client[i], 20*time.Second)
	}

	chans := channelsFile(t)
	common := []string{"--nats-listen", "off", "--allow-networks", "127.0.0.0/8",
		"--retry", "50ms,x2,max=1s,attempts=1000", "--coalesce-threshold", "0", "--reconcile", "500ms",
		"--startup-timeout", "30s", "--log-level", "warn"}
	startHub := func(name string, args ...string) *hubProc {
		port := testenv.FreePort(t)
		h := &hubProc{t: t, name: name, url: fmt.Sprintf("http://127.0.0.1:%d/", port)}
		args = append(append([]string{"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", filepath.Join(dir, name)}, common...), args...)
		p := testproc.Start(t, name, hubBin, args...)
		testproc.WaitHTTP(t, p, h.url+"readyz", 60*time.Second)
		return h
	}
	origin := startHub("origin", "--channels", chans, "--nats-url", strings.Join(natsURLs, ","), "--nats-replicas", "3")
	var proxies [3]*linkProxy
	var leafURLs []string
	for i := range 3 {
		proxies[i] = newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf[i]))
		leafURLs = append(leafURLs, proxies[i].URL())
	}
	edge := startHub("edge", "--upstream", origin.url, "--upstream-leaf", strings.Join(leafURLs, ","), "--nats-domain", "edge", "--leaf-password-file", leafPasswordFile(t))
	r := newReceiver(t)
	r.subscribe(t, edge, topic)
	sse := openEvents(t, edge, channel)

	src := startSource(t, origin, edge)
	waitFor(*steady)
	steadyAcks := src.acks()

	// the link cut (every node's proxy) and restored under load
	for _, p := range proxies {
		p.Cut()
	}
	body := edge.awaitReadyz(503, "stale since", 15*time.Second)
	t.Logf("edge /readyz with its link cut: %s", strings.TrimSpace(body))
	waitFor(*cutFor)
	// restored first towards the log's stream leader, so that the node
	// killed next holds both the leaf link and the mirror's source
	on := streamLeader(t, natsURLs)
	beforeRestore := src.acks()
	restored := time.Now()
	proxies[on].Restore()
	testenv.Eventually(t, 30*time.Second, func() bool { return proxies[on].active() > 0 }, "the leaf link on node %d", on)
	for i, p := range proxies {
		if i != on {
			p.Restore()
		}
	}
	last := beforeRestore[len(beforeRestore)-1].seq
	testenv.Eventually(t, time.Minute, func() bool { _, ok := sse.at(last); return ok }, "the edge catches up after the cut")
	catchUp := time.Since(restored)
	edge.awaitReadyz(200, "ready", 30*time.Second)

	// kill -9 the node the leaf link is on (the stream leader), then restart it
	if proxies[on].active() == 0 {
		t.Fatalf("the edge's leaf link left node %d", on)
	}
	nodes[on].Kill()
	killed := time.Now()
	testenv.Eventually(t, 30*time.Second, func() bool { return proxies[(on+1)%3].active()+proxies[(on+2)%3].active() > 0 },
		"the leaf link dials another node after node %d was killed", on)
	relinked := time.Since(killed)
	leader := streamLeader(t, natsURLs, on)
	nodes[on].Restart(t)
	testproc.WaitPort(t, nodes[on], client[on], 20*time.Second)
	waitFor(time.Second) // load after the node is back
	src.Stop()
	acks := src.acks()
	lastSeq := acks[len(acks)-1].seq
	testenv.Eventually(t, time.Minute, func() bool { _, ok := sse.at(lastSeq); return ok }, "the edge holds the last acknowledged notification")
	// from the kill on: the origin's longest pause between two
	// acknowledgements, and the longest replication lag
	var originStall, killLag time.Duration
	for i, a := range acks {
		if i == 0 || a.at.Before(killed) {
			continue
		}
		at, _ := sse.at(a.seq)
		originStall, killLag = max(originStall, a.at.Sub(acks[i-1].at)), max(killLag, at.Sub(a.at))
	}
	waitDelivered(t, "edge", r, sse, acks, time.Minute)
	// both hubs say they are ready again after the node's restart
	origin.awaitReadyz(200, "ready", 30*time.Second)
	edge.awaitReadyz(200, "ready", 30*time.Second)

	var lags []time.Duration
	for _, a := range steadyAcks {
		if at, ok := sse.at(a.seq); ok {
			lags = append(lags, max(0, at.Sub(a.at)))
		}
	}
	t.Logf("load %d notifications/s, %d acknowledged (%d during the steady %v); origin on a 3-node NATS cluster (R3), hubs as processes",
		*rate, len(acks), len(steadyAcks), *steady)
	t.Logf("replication lag (origin's acknowledgement to the edge's Server-Sent Event) p50 %v p99 %v", pct(lags, 50), pct(lags, 99))
	t.Logf("catch-up after a %v cut of the leaf link: %v; node %d (the leaf's and the log's leader) killed: the leaf on another node after %v, the origin's longest pause between acknowledgements %v, the longest replication lag %v; the log's new leader n%d",
		*cutFor, catchUp.Round(time.Millisecond), on, relinked.Round(time.Millisecond), originStall.Round(time.Millisecond), killLag.Round(time.Millisecond), leader)
}

// streamLeader returns the index of the cluster node that leads the
// origin's log stream, waiting for one other than the dead nodes.
func streamLeader(t *testing.T, urls []string, dead ...int) int {
	t.Helper()
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	leader := -1
	testenv.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, wire.Stream)
		if err != nil || st.CachedInfo().Cluster == nil {
			return false
		}
		_, err = fmt.Sscanf(st.CachedInfo().Cluster.Leader, "n%d", &leader)
		return err == nil && leader >= 0 && leader < len(urls) && !slices.Contains(dead, leader)
	}, "the leader of stream %s", wire.Stream)
	return leader
}
