package staticsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// testHub is a hub process for these tests: loopback Sources allowed.
type testHub struct {
	url, token string
}

func startHub(t *testing.T) testHub {
	token := "staticsource-admin-token-0123456789"
	s := servertest.Start(t, nil, func(c *server.Config) {
		c.AdminToken, c.AllowNetworks, c.Retry = token, "127.0.0.0/8", "10ms,x2,max=50ms,attempts=50"
		c.Reconcile = 50 * time.Millisecond
	})
	return testHub{url: s.HubURL, token: token}
}

func (h testHub) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(h.url, "/")+path, rd)
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// followStatus is what these tests read of a channel's follow status.
type followStatus struct {
	Polls, Requests, NotModified, Errors, Lists, Gaps, Timeouts uint64
	LastError, FetchTimeout                                     string
}

func (h testHub) followStatus(t *testing.T, channel string) followStatus {
	t.Helper()
	_, b := h.do(t, http.MethodGet, "/admin/channels/"+channel, nil)
	var v struct {
		FollowStatus followStatus `json:"followStatus"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("channel view: %v %s", err, b)
	}
	return v.FollowStatus
}

// receiver is a webhook destination recording every entry it receives,
// in order, and checking that the notifications are contiguous
// (hubtest.Receiver).
type receiver struct{ *hubtest.Receiver }

func newReceiver(t *testing.T) *receiver { return &receiver{hubtest.NewReceiver(t)} }

// received returns every entry received, in order.
func (r *receiver) received() []changefeed.Entry { return r.Entries() }

// got names every entry received by (loc, change, hash), in order, with
// the receiver's errors and gaps.
func (r *receiver) got() (ids, errs []string, gaps int) {
	for _, e := range r.Entries() {
		ids = append(ids, e.Loc+" "+string(e.MD.Change)+" "+e.MD.Hash)
	}
	return ids, r.Errors(), r.Gaps()
}

// follow creates a channel following the Source at index, subscribes rcv
// and waits for the follower's first poll.
func (h testHub) follow(t *testing.T, name, index, interval string, rcv *receiver) string {
	t.Helper()
	code, body := h.do(t, http.MethodPost, "/admin/channels", map[string]any{"name": name, "follow": index, "pollInterval": interval})
	if code != http.StatusCreated {
		t.Fatalf("POST /admin/channels: %d %s", code, body)
	}
	var ch struct{ Topic string }
	_ = json.Unmarshal(body, &ch)
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {ch.Topic}, "hub.callback": {rcv.URL() + "/cb"}}
	resp, err := http.PostForm(h.url, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %s", resp.Status)
	}
	waitFor(t, 30*time.Second, "the subscription is active", func() bool {
		_, b := h.do(t, http.MethodGet, "/admin/subscriptions", nil)
		return bytes.Contains(b, []byte(`"active"`))
	})
	waitFor(t, 30*time.Second, "the follower polled the Source", func() bool { return h.followStatus(t, name).Polls > 0 })
	return ch.Topic
}

// startMirror runs a mirror of the channel over WebSocket, resources
// fetched from the server's res/, and returns its directory.
func startMirror(t *testing.T, h testHub, base, topic, channel string) string {
	dir := t.TempDir()
	var live atomic.Bool
	m, err := mirror.Open(mirror.Config{Dir: filepath.Join(dir, "mirror"), StatePath: filepath.Join(dir, "state.json"),
		BaseURL: base + "/res/", Hub: h.url, Topic: topic, Events: func(e mirror.Event) {
			if e.Kind == mirror.EventInfo && strings.Contains(e.Message, "following live") {
				live.Store(true)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.RunWebSocket(ctx, mirror.WebSocketConfig{Hub: h.url, Channel: channel}) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, 30*time.Second, "the mirror follows the channel live", live.Load)
	return filepath.Join(dir, "mirror")
}

// files reads a directory: relative path to content, without the
// temporary files of a write in progress (the Source's, the mirror's),
// nor a file renamed or removed while it is read.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".tmp") || strings.HasPrefix(d.Name(), ".rshub-tmp-") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// waitFor waits for cond, checking it every few milliseconds, until the
// deadline; no sleep stands for synchronisation.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", within, what)
		}
		<-tick.C
	}
}
