package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testproc"
)

// step is one publish at a hub and the hub's /readyz asked right after
// its answer.
type step struct {
	published   int // the publish's status (0: no answer)
	body        string
	at          time.Time // when the publish was answered
	ready       int       // /readyz's status right after
	readyReason string
}

// prober publishes on its own channel at one hub, one notification after
// the other (the same one again until it is acknowledged), and asks the
// hub's /readyz after each answer.
type prober struct {
	hub    string // the hub's own URL
	hubURL string // the hub URL Sources name (every hub's)
	topic  string
	mu     sync.Mutex
	steps  []step
}

func (p *prober) run(ctx context.Context) {
	client := &http.Client{Timeout: 10 * time.Second}
	for n := 0; ctx.Err() == nil; {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.hub, strings.NewReader(series.Notification(n)))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+p.topic+`>; rel="self", <`+p.hubURL+`>; rel="hub"`)
		var s step
		if resp, err := client.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			s.published, s.body = resp.StatusCode, strings.TrimSpace(string(b))
		}
		s.at = time.Now()
		if ctx.Err() != nil {
			return
		}
		if resp, err := client.Get(p.hub + "readyz"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			s.ready, s.readyReason = resp.StatusCode, strings.TrimSpace(string(b))
		}
		p.mu.Lock()
		p.steps = append(p.steps, s)
		p.mu.Unlock()
		if s.published == http.StatusOK {
			n++
		}
		select { // pacing, not synchronisation
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *prober) snapshot() []step {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]step(nil), p.steps...)
}

// settled reports whether the prober has n acknowledged publishes in a
// row after since (the kill), after its last failure if any.
func settled(steps []step, since time.Time, n int) bool {
	run := 0
	for _, s := range steps {
		switch {
		case s.at.Before(since):
		case s.published == http.StatusOK:
			run++
		default:
			run = 0
		}
	}
	return run >= n
}

// readyWithin is how many publishes taken in a row may still see /readyz
// say 503 after an outage: a prober's steps are at least 50 ms apart, so
// these many span at least a second on an idle machine, and more on a busy
// one, where the hub's recovery is as slow as the prober's steps.
const readyWithin = 20

// Readiness follows the log within a second both ways through a kill -9
// of the NATS node that leads the log's stream (issue 45): checked on the
// order of what each hub answered, not on a clock that load can stretch.
// A publish the log did not take is followed by a 503 from /readyz unless
// the next publish is taken (the log was back meanwhile); a publish the
// log took is followed by 200, except within readyWithin publishes (a
// second or more) of the first one taken after the kill or the last
// failure.
func TestCluster_ReadinessFollowsTheLogThroughAStreamLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster, Redis and three hubs")
	}
	c := startCluster(t)
	for i := range 3 {
		c.startHub(i)
	}
	c.awaitAll(200, 60*time.Second, "every hub ready")
	probers := make([]*prober, 3)
	for i := range 3 {
		topic := fmt.Sprintf("http://127.0.0.1:1/cluster/ready%d", i)
		body := fmt.Sprintf(`{"name":"ready%d","topic":%q,"trust":"open"}`, i, topic)
		req, _ := http.NewRequest(http.MethodPost, c.checked[0]+"admin/channels", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode/100 != 2 {
			t.Fatalf("create channel ready%d: %v %v", i, resp, err)
		}
		resp.Body.Close()
		probers[i] = &prober{hub: c.checked[i], hubURL: c.hubURL, topic: topic}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range probers {
		wg.Go(func() { p.run(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	testproc.WaitFor(t, 60*time.Second, "publishes taken at every hub", func() (bool, string) {
		for i, p := range probers {
			steps := p.snapshot()
			if n := len(steps); n < 10 || steps[n-1].published != http.StatusOK {
				return false, fmt.Sprintf("hub %d: %d steps, %+v", i, n, steps[max(n-1, 0):])
			}
		}
		return true, ""
	})

	leader := c.streamLeader(t)
	t.Logf("killing nats%d, the stream's leader", leader)
	killed := time.Now()
	c.nats[leader].Kill()
	testproc.WaitFor(t, 3*time.Minute, "every hub publishing again after the kill", func() (bool, string) {
		for i, p := range probers {
			if steps := p.snapshot(); !settled(steps, killed, 20) {
				last := steps[len(steps)-1]
				return false, fmt.Sprintf("hub %d not settled: last publish %d %q, /readyz %d %q", i, last.published, last.body, last.ready, last.readyReason)
			}
		}
		return true, ""
	})
	cancel()
	wg.Wait()

	failedAnywhere := false
	for i, p := range probers {
		steps := p.snapshot()
		firstOK := -1 // the step of the first publish taken after the kill or the last failure
		fails, late := 0, 0
		var backAfter time.Duration // from the first publish taken after the last failure to the first 200 of /readyz
		for j, s := range steps {
			if s.at.Before(killed) {
				continue
			}
			if s.published != http.StatusOK {
				fails++
				failedAnywhere, firstOK = true, -1
				next := j + 1
				if s.ready == http.StatusOK && next < len(steps) && steps[next].published != http.StatusOK {
					t.Errorf("hub %d: publish %d answered %d %q, yet /readyz said 200 right after, and the next publish failed too",
						i, j, s.published, s.body)
				}
				continue
			}
			if firstOK < 0 {
				firstOK, backAfter = j, -1
			}
			if s.ready == http.StatusOK && backAfter < 0 && fails > 0 {
				backAfter = s.at.Sub(steps[firstOK].at)
			}
			if s.ready != http.StatusOK && j-firstOK >= readyWithin {
				late++
				t.Errorf("hub %d: publish %d taken %d publishes (%v) after the first taken after the outage, yet /readyz said %d %q",
					i, j, j-firstOK, s.at.Sub(steps[firstOK].at).Round(time.Millisecond), s.ready, s.readyReason)
			}
		}
		t.Logf("hub %d: %d publishes, %d refused during the outage, %d taken while /readyz said 503 after %d taken; /readyz 200 again at the publish %v after the first taken",
			i, len(steps), fails, late, readyWithin, backAfter.Round(time.Millisecond))
	}
	if !failedAnywhere {
		t.Log("no publish failed at any hub: the new leader was elected between two publishes; the down direction went unchecked")
	}
}

// streamLeader returns the index of the NATS node that leads the log's
// stream.
func (c *cluster) streamLeader(t *testing.T) int {
	t.Helper()
	var leader int
	testproc.WaitFor(t, 30*time.Second, "the stream's leader", func() (bool, string) {
		nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", c.natsPort[0]))
		if err != nil {
			return false, err.Error()
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false, err.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, "RSHUB")
		if err != nil {
			return false, err.Error()
		}
		info := st.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return false, "no leader"
		}
		if _, err := fmt.Sscanf(info.Cluster.Leader, "n%d", &leader); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return leader
}
