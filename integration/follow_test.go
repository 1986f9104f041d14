package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	pullsource "github.com/rshub/rshub/examples/pullsource/source"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// followSource serves a pullsource.Source on a fixed loopback address and
// can be stopped and started again there (a Source restart).
type followSource struct {
	t    *testing.T
	src  *pullsource.Source
	addr string
	srv  *http.Server
}

func startFollowSource(t *testing.T, cfg pullsource.Config) *followSource {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &followSource{t: t, src: pullsource.New(cfg), addr: ln.Addr().String()}
	s.src.SetBase("http://" + s.addr)
	s.serve(ln)
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func (s *followSource) serve(ln net.Listener) {
	s.srv = &http.Server{Handler: s.src, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
}

// restart closes the Source's server (and its connections) and serves the
// same history on the same address again.
func (s *followSource) restart() {
	s.t.Helper()
	_ = s.srv.Close()
	var ln net.Listener
	waitFor(s.t, 5*time.Second, "the Source's address is free again", func() bool {
		var err error
		ln, err = net.Listen("tcp", s.addr)
		return err == nil
	})
	s.serve(ln)
}

// followReceiver is a webhook destination that records every entry it
// receives, in order, and checks that from/until are contiguous
// (hubtest.Receiver).
type followReceiver struct {
	*hubtest.Receiver
	// hubView, set by followChannel, tells what the hub holds of the
	// channel and the subscription, for a failure's message.
	hubView func() string
}

func newFollowReceiver(t *testing.T) *followReceiver {
	return &followReceiver{Receiver: hubtest.NewReceiver(t)}
}

func (r *followReceiver) gapCount() int { return r.Gaps() }

// got returns the changes received, in order, and the receiver's errors.
func (r *followReceiver) got() ([]pullsource.Change, []string) {
	var out []pullsource.Change
	for _, e := range r.Entries() {
		out = append(out, pullsource.Change{Loc: e.Loc, Change: e.MD.Change, DateTime: e.MD.DateTime.Time})
	}
	return out, r.Errors()
}

// waitFor waits for cond, checking it every few milliseconds, until the
// deadline; no sleep stands for synchronisation.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	waitUntil(t, within, cond, func() string { return what })
}

// waitUntil is waitFor with a message made when the wait fails.
func waitUntil(t *testing.T, within time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %s", within, what())
		}
		<-tick.C
	}
}

type followHub struct {
	url, token string
}

func (h followHub) do(t *testing.T, method, path string, body any) (int, []byte) {
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

// show returns the body of GET path, or why there is none: for a failure's
// message, which may be made after the test that started h ended (and h
// stopped), so it does not fail a test itself.
func (h followHub) show(path string) string {
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(h.url, "/")+path, nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

// startFollowHub starts a hub for the follow tests, with options applied
// after the tests' settings.
func startFollowHub(t *testing.T, options ...func(*server.Config)) followHub {
	token := "follow-admin-token-0123456789"
	s := servertest.Start(t, nil, append([]func(*server.Config){func(c *server.Config) {
		c.AdminToken, c.AllowNetworks, c.Retry = token, "127.0.0.0/8", "10ms,x2,max=50ms,attempts=50"
		c.Reconcile = 50 * time.Millisecond
	}}, options...)...)
	return followHub{url: s.HubURL, token: token}
}

// followChannel creates a followed channel and subscribes rcv to it.
func followChannel(t *testing.T, h followHub, ch map[string]any, rcv *followReceiver) string {
	t.Helper()
	code, body := h.do(t, http.MethodPost, "/admin/channels", ch)
	if code != http.StatusCreated {
		t.Fatalf("POST /admin/channels: %d %s", code, body)
	}
	var got struct{ Topic string }
	_ = json.Unmarshal(body, &got)
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {got.Topic}, "hub.callback": {rcv.URL() + "/cb"}}
	resp, err := http.PostForm(h.url, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %s", resp.Status)
	}
	waitFor(t, 10*time.Second, "the subscription is active", func() bool {
		_, b := h.do(t, http.MethodGet, "/admin/subscriptions", nil)
		return bytes.Contains(b, []byte(`"active"`))
	})
	// the follower's first poll sets where the channel starts following;
	// the Source's changes made after it are what the tests expect to see
	name, _ := ch["name"].(string)
	waitFor(t, 10*time.Second, "the follower polled the Source", func() bool { return h.followStatus(t, name).Polls > 0 })
	rcv.hubView = func() string {
		return fmt.Sprintf("the hub's channel: %s; its subscriptions: %s", h.show("/admin/channels/"+name), h.show("/admin/subscriptions"))
	}
	return got.Topic
}

// caughtUp waits until rcv holds exactly the Source's history, with no gap.
func caughtUp(t *testing.T, src *pullsource.Source, rcv *followReceiver, what string) {
	t.Helper()
	holdsExactly(t, src.History(), rcv, 0, what)
}

// holdsExactly waits until rcv holds exactly want, in order, none twice,
// its notifications contiguous but for gaps gaps.
func holdsExactly(t *testing.T, want []pullsource.Change, rcv *followReceiver, gaps int, what string) {
	t.Helper()
	waitUntil(t, 20*time.Second, func() bool {
		got, _ := rcv.got()
		return len(got) >= len(want)
	}, func() string {
		got, errs := rcv.got()
		msg := fmt.Sprintf("%s: the subscriber has %d of the Source's %d entries (receiver errors: %v)", what, len(got), len(want), errs)
		if rcv.hubView != nil {
			msg += "; " + rcv.hubView()
		}
		return msg
	})
	got, errs := rcv.got()
	if len(errs) > 0 {
		t.Fatalf("%s: receiver: %v", what, errs)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i].Loc != want[i].Loc || got[i].Change != want[i].Change || !got[i].DateTime.Equal(want[i].DateTime) {
			t.Fatalf("%s: entry %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
	if n := rcv.gapCount(); n != gaps {
		t.Fatalf("%s: %d gaps in the notifications' from/until, want %d", what, n, gaps)
	}
}

func TestFollow_SubscriberEndsWithTheSourceHistoryAcrossRotationsRestartsAndErrors(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	src := startFollowSource(t, pullsource.Config{RotateEvery: 4})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	// the Source URL is the origin: discovery goes through /.well-known/resourcesync
	followChannel(t, h, map[string]any{"name": "pulled", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)

	src.src.Change(3)
	caughtUp(t, src.src, rcv, "first changes")
	for round := range 5 {
		src.src.Change(5 + round) // several rotations between two polls, or none
		caughtUp(t, src.src, rcv, fmt.Sprintf("round %d", round))
	}
	src.restart()
	src.src.Change(7)
	caughtUp(t, src.src, rcv, "after a Source restart")

	type status struct {
		Channel                                    string
		Polls, Requests, NotModified, Bytes, Lists uint64
		Errors                                     uint64
	}
	var st []status
	read := func() status {
		_, b := h.do(t, http.MethodGet, "/admin/follow", nil)
		if err := json.Unmarshal(b, &st); err != nil || len(st) != 1 {
			t.Fatalf("GET /admin/follow: %v %s", err, b)
		}
		return st[0]
	}
	for _, fault := range []pullsource.Fault{pullsource.Fault5xx, pullsource.FaultGarbage, pullsource.FaultTimeout} {
		// the failed polls' count, not the channel's failures: those of the
		// previous fault may still show until the next poll ends
		before := read().Errors
		src.src.SetFault(fault)
		src.src.Change(6)
		waitFor(t, 10*time.Second, fmt.Sprintf("the follower records fault %d", fault), func() bool {
			return read().Errors > before
		})
		src.src.SetFault(pullsource.FaultNone)
		caughtUp(t, src.src, rcv, fmt.Sprintf("after fault %d", fault))
	}

	// with nothing new, polls cost conditional GETs answered 304
	idle := read()
	waitFor(t, 10*time.Second, "idle polls are answered 304", func() bool {
		now := read()
		return now.Polls >= idle.Polls+5 && now.NotModified >= idle.NotModified+5
	})
	reqs, sent := src.src.Stats()
	t.Logf("follow figures: %d changes in %d lists; hub: %d polls, %d GETs (%d answered 304), %d bytes fetched, %d lists published, %d failed polls; Source: %d requests, %d body bytes sent",
		len(src.src.History()), src.src.Lists(), st[0].Polls, st[0].Requests, st[0].NotModified, st[0].Bytes, st[0].Lists, st[0].Errors, reqs, sent)
	if st[0].NotModified == 0 || st[0].Errors < 3 {
		t.Errorf("status %+v: want conditional GETs answered 304 and the three faults counted", st[0])
	}
}

func TestFollow_LenientChannelRecordsLeniencies(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{RotateEvery: 3, OmitFrom: true})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "strict", "follow": "http://" + src.addr + "/capabilitylist.xml", "pollInterval": "20ms"}, newFollowReceiver(t))
	followChannel(t, h, map[string]any{"name": "lenient", "follow": "http://" + src.addr + "/capabilitylist.xml", "pollInterval": "20ms", "validation": "lenient"}, rcv)
	src.src.Change(8)
	caughtUp(t, src.src, rcv, "lenient channel")

	_, b := h.do(t, http.MethodGet, "/admin/channels/lenient", nil)
	var v struct {
		FollowStatus struct {
			Leniencies []struct {
				Rule  string
				Count uint64
			}
		} `json:"followStatus"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.FollowStatus.Leniencies) == 0 || v.FollowStatus.Leniencies[0].Rule != string(changefeed.RuleRootAttributes) {
		t.Fatalf("lenient channel view: %v %s", err, b)
	}
	waitFor(t, 10*time.Second, "the strict channel refuses the Source", func() bool {
		_, b := h.do(t, http.MethodGet, "/admin/channels/strict", nil)
		return bytes.Contains(b, []byte("root-attributes")) && bytes.Contains(b, []byte(`"lastError"`))
	})
	resp, err := http.Get(h.url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(m, []byte(`rshub_leniencies_total{channel="lenient",rule="root-attributes"}`)) {
		t.Errorf("metrics lack rshub_leniencies_total for the lenient channel")
	}
}
