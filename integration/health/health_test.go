// Package health checks, over real dependencies, that a hub's readiness
// follows them: when NATS or Redis comes back after a fault, /readyz
// answers 200 again within seconds with nothing else happening, and it
// answers at once while a dependency hangs.
package health

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
	hubserver "github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// healAfter is how soon after a dependency answers again /readyz must
// answer 200 (issue 23).
const healAfter = 5 * time.Second

// hub is a hub process under test, with one verified subscription.
type hub struct {
	t      *testing.T
	base   string
	client *http.Client
}

// startHub runs a hub on natsURL (and redisURL when set) with its default
// timings, subscribes one callback and delivers one notification to it, so
// that every loop has done its work once; then nothing else happens.
func startHub(t *testing.T, natsURL, redisURL string) *hub {
	t.Helper()
	st := servertest.Start(t, nil, func(c *hubserver.Config) { c.NATSURL, c.RedisURL = natsURL, redisURL })
	h := &hub{t: t, base: st.HubURL, client: &http.Client{Timeout: 5 * time.Second}}
	topic := "http://" + st.Addr + "/topics/demo"
	var verified, got atomic.Int32
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			verified.Add(1)
			return
		}
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(cb.Close)
	resp, err := http.PostForm(h.base, url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %d", resp.StatusCode)
	}
	// the subscription starts at the log's end as of its verification
	testenv.Eventually(t, 30*time.Second, func() bool { return verified.Load() > 0 }, "subscription verified")
	body := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="2024-01-01T00:00:00Z" until="2024-01-01T00:00:01Z"/>
<url><loc>http://example.com/n/1</loc><rs:md change="updated" datetime="2024-01-01T00:00:00Z"/></url>
</urlset>
`
	req, _ := http.NewRequest(http.MethodPost, h.base, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", "<"+topic+`>; rel="self", <`+h.base+`>; rel="hub"`)
	resp, err = h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("publish: %d %s", resp.StatusCode, msg)
	}
	testenv.Eventually(t, 30*time.Second, func() bool { return got.Load() > 0 }, "the notification delivered")
	h.awaitReady(30*time.Second, "hub ready before the fault")
	return h
}

// readyz returns /readyz's status, body and how long it took to answer.
func (h *hub) readyz() (int, string, time.Duration) {
	start := time.Now()
	resp, err := h.client.Get(h.base + "readyz")
	if err != nil {
		return 0, err.Error(), time.Since(start)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// awaitReady waits until /readyz answers 200 and returns how long it took.
func (h *hub) awaitReady(within time.Duration, what string) time.Duration {
	h.t.Helper()
	start := time.Now()
	last := ""
	testproc.WaitFor(h.t, within, what, func() (bool, string) {
		code, body, _ := h.readyz()
		if now := strconv.Itoa(code) + " " + strings.TrimSpace(body); now != last {
			last = now
			h.t.Logf("%v: readyz %s", time.Since(start).Round(10*time.Millisecond), last)
		}
		return code == http.StatusOK, last
	})
	return time.Since(start)
}

// awaitUnready waits until /readyz answers 503 naming want.
func (h *hub) awaitUnready(want string) {
	h.t.Helper()
	testproc.WaitFor(h.t, 30*time.Second, "hub unready naming "+want, func() (bool, string) {
		code, body, _ := h.readyz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, want), strconv.Itoa(code) + " " + body
	})
}

// healed asserts that /readyz answers 200 within healAfter of the
// dependency answering again (now).
func (h *hub) healed(dependency string) {
	h.t.Helper()
	took := h.awaitReady(healAfter, "ready again after "+dependency+" answers")
	h.t.Logf("ready %v after %s answered again", took.Round(10*time.Millisecond), dependency)
}

func TestReadyz_HealsAfterTheNATSConnectionIsDropped(t *testing.T) {
	ns := testenv.RestartableNATS(t)
	h := startHub(t, ns.URL(), "")
	if n := ns.Disconnect("rshub"); n == 0 {
		t.Fatal("the hub's NATS connection is not on the server")
	}
	h.healed("NATS (connection dropped)")
}

func TestReadyz_HealsAfterTheNATSServerRestarts(t *testing.T) {
	ns := testenv.RestartableNATS(t)
	h := startHub(t, ns.URL(), "")
	ns.Stop()
	h.awaitUnready("NATS")
	ns.Start()
	h.healed("NATS (server restarted)")
}

func TestReadyz_HealsAfterANATSServerProcessIsKilled(t *testing.T) {
	bin, err := testproc.Build(t.TempDir(), "nats-server", "github.com/nats-io/nats-server/v2")
	if err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	ns := testproc.Start(t, "nats-server", bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", t.TempDir())
	testproc.WaitPort(t, ns, port, 30*time.Second)
	h := startHub(t, "nats://127.0.0.1:"+strconv.Itoa(port), "")
	ns.Kill()
	h.awaitUnready("NATS")
	ns.Restart(t)
	testproc.WaitPort(t, ns, port, 30*time.Second)
	h.healed("NATS (process killed and restarted)")
}

// outage is how long a dependency stays down in the long-outage cases:
// long enough for every loop's backoff to reach its cap (the blip of
// issue 23 was 10 s).
const outage = 10 * time.Second

// Redis down for outage, long enough for the loops that use it to stall
// and back off as far as they go; /readyz says so all along, and is 200
// within healAfter of Redis answering again.
func TestReadyz_HealsAfterALongRedisOutage(t *testing.T) {
	ns := testenv.RestartableNATS(t)
	redis := testenv.RestartableRedis(t)
	h := startHub(t, ns.URL(), redis.URL)
	stopped := time.Now()
	redis.Stop()
	h.awaitUnready("webhook delivery unreachable") // the engines stalled, not only the store probe
	testproc.WaitFor(t, 2*outage, "the outage held", func() (bool, string) {
		if code, body, _ := h.readyz(); code == http.StatusOK {
			t.Fatalf("readyz 200 while Redis is down: %s", body)
		}
		return time.Since(stopped) >= outage, "Redis down for " + time.Since(stopped).Round(time.Second).String()
	})
	redis.Start()
	h.healed("Redis")
}

// While Redis hangs (stopped with SIGSTOP: connections open, nothing
// answers), /readyz still answers at once, first with what it knew, then
// 503 naming the store; and 200 again once Redis answers.
func TestReadyz_AnswersAtOnceWhileRedisHangs(t *testing.T) {
	ns := testenv.RestartableNATS(t)
	redis := testenv.RestartableRedis(t)
	h := startHub(t, ns.URL(), redis.URL)
	redis.Pause()
	paused := true
	t.Cleanup(func() {
		if paused {
			redis.Resume()
		}
	})
	// a /readyz that waited on the hanging store would take a whole probe
	// (2 s, server's probeTimeout); half of it leaves room for a loaded
	// machine's scheduling (100 ms failed at 360 ms under a full test run)
	const quick = time.Second
	deadline := time.Now().Add(8 * time.Second)
	sawStore := false
	for time.Now().Before(deadline) && !sawStore {
		code, body, took := h.readyz()
		if took > quick {
			t.Fatalf("readyz took %v while Redis hangs (%d %q), want within %v", took, code, body, quick)
		}
		sawStore = code == http.StatusServiceUnavailable && strings.Contains(body, "store")
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
	if !sawStore {
		t.Fatal("readyz never named the hanging store")
	}
	redis.Resume()
	paused = false
	h.healed("Redis (resumed)")
}
