package edge_test

// Edges take their channels from the origin (issue 45): an origin and an
// edge hub run as processes (cmd/hub), each with its own embedded NATS
// server and data folder, the edge's leaf link through a proxy the test
// cuts.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

const procAdminToken = "edge-test-admin-token"

// The origin's channels in the tests: A and B, as an operator's file
// names them.
const (
	topicA = "http://127.0.0.1:1/edge/a"
	topicB = "http://127.0.0.1:1/edge/b"
)

// procHub is a hub run as a process.
type procHub struct {
	*hubProc // name and url, for the helpers that take one
	proc     *testproc.Proc
	dir      string
}

// hubArgs are the arguments every hub process of these tests takes; the
// leaf links' password file is the origin's and every edge's.
func hubArgs(t *testing.T, port int, dir string, extra ...string) []string {
	return append([]string{"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", dir, "--nats-listen", "off",
		"--leaf-password-file", leafPasswordFile(t),
		"--allow-networks", "127.0.0.0/8", "--retry", "50ms,x2,max=1s,attempts=1000", "--coalesce-threshold", "0",
		"--reconcile", "500ms", "--startup-timeout", "60s", "--log-level", "warn", "--admin-token", procAdminToken}, extra...)
}

// startProcHub starts cmd/hub with hubArgs and extra and waits until its
// HTTP listener answers (not until it is ready: an edge started while its
// origin is down serves without being ready).
func startProcHub(t *testing.T, name string, extra ...string) *procHub {
	t.Helper()
	port := testenv.FreePort(t)
	dir := filepath.Join(t.TempDir(), name)
	h := &procHub{hubProc: &hubProc{t: t, name: name, url: fmt.Sprintf("http://127.0.0.1:%d/", port)}, dir: dir}
	h.proc = testproc.Start(t, name, bins.hub, hubArgs(t, port, dir, extra...)...)
	t.Cleanup(func() {
		out := h.proc.Output(0)
		if i := strings.Index(out, "Violation"); i >= 0 { // the leaf link needs nothing LeafPermissions refuses
			t.Errorf("%s: the NATS server refused a subject: %s", name, tail(out[i:], 600))
		}
	})
	testproc.WaitFor(t, 90*time.Second, name+" serving", func() (bool, string) {
		select {
		case <-h.proc.Done():
			t.Fatalf("%s exited:\n%s", name, h.proc.Output(4000))
		default:
		}
		code, body := h.get("healthz")
		return code == 200, body
	})
	return h
}

// originWithLeaf starts an origin hub with the channels of file, taking
// leaf links on a port of its own, and returns it and that port.
func originWithLeaf(t *testing.T, file string, extra ...string) (*procHub, int) {
	t.Helper()
	leaf := testenv.FreePort(t)
	args := append([]string{"--leaf-listen", fmt.Sprintf("127.0.0.1:%d", leaf)}, extra...)
	if file != "" {
		args = append(args, "--channels", file)
	}
	o := startProcHub(t, "origin", args...)
	o.awaitReadyz(200, "ready", 60*time.Second)
	return o, leaf
}

// edgeOf starts an edge hub of origin, its leaf link through p.
func edgeOf(t *testing.T, origin *procHub, p *linkProxy, extra ...string) *procHub {
	t.Helper()
	return startProcHub(t, "edge", append([]string{"--upstream", origin.url, "--upstream-leaf", p.URL(), "--nats-domain", "edge"}, extra...)...)
}

// writeChannels writes a channels file of name → topic pairs.
func writeChannels(t *testing.T, pairs ...string) string {
	t.Helper()
	var items []string
	for i := 0; i+1 < len(pairs); i += 2 {
		items = append(items, fmt.Sprintf(`{"name":%q,"topic":%q,"trust":"open"}`, pairs[i], pairs[i+1]))
	}
	f := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(f, []byte("["+strings.Join(items, ",")+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// adminDo sends an admin API request to h.
func (h *procHub) adminDo(method, path, body string) (int, string) {
	req, _ := http.NewRequest(method, h.url+strings.TrimPrefix(path, "/"), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+procAdminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// subscribeOutcome subscribes a callback of its own to topic at h and
// returns what the hub did: "verified" once it verified the intent,
// "denied: <reason>" when it denied the subscription (hub.mode=denied,
// WebSub §5.2), "refused: <status> <body>" when it refused the request.
func subscribeOutcome(t *testing.T, h *hubProc, topic string) string {
	t.Helper()
	outcome := make(chan string, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch q.Get("hub.mode") {
		case "subscribe":
			_, _ = io.WriteString(w, q.Get("hub.challenge"))
			select {
			case outcome <- "verified":
			default:
			}
		case "denied":
			select {
			case outcome <- "denied: " + q.Get("hub.reason"):
			default:
			}
		default:
			w.WriteHeader(http.StatusNoContent) // notifications
		}
	}))
	defer cb.Close()
	resp, err := http.PostForm(h.url, url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb.URL + "/cb"}})
	if err != nil {
		return "refused: " + err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Sprintf("refused: %d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	select {
	case o := <-outcome:
		return o
	case <-time.After(30 * time.Second):
		return "no verification and no denial within 30s"
	}
}

// awaitSubscribable waits until h verifies (want) or denies or refuses
// (!want) a subscription to topic.
func awaitSubscribable(t *testing.T, h *hubProc, topic string, want bool, what string) {
	t.Helper()
	testproc.WaitFor(t, 90*time.Second, what, func() (bool, string) {
		o := subscribeOutcome(t, h, topic)
		return (o == "verified") == want, o
	})
}

// publishTo publishes notification n on topic at h, retrying until the
// origin acknowledges it, and returns its sequence.
func publishTo(t *testing.T, h *hubProc, topic string, n int) uint64 {
	t.Helper()
	var seq uint64
	testproc.WaitFor(t, 60*time.Second, fmt.Sprintf("publish %d on %s at %s", n, topic, h.name), func() (bool, string) {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(series.Notification(n)))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+topic+`>; rel="self", <`+h.url+`>; rel="hub"`)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 == 4 {
			t.Fatalf("publish %d on %s at %s refused: %d %s", n, topic, h.name, resp.StatusCode, b)
		}
		_, err = fmt.Sscan(resp.Header.Get("Rshub-Seq"), &seq)
		return resp.StatusCode == http.StatusOK && err == nil, fmt.Sprintf("%d %s", resp.StatusCode, b)
	})
	return seq
}

// awaitDelivered waits until r got notification n at sequence seq.
func awaitDelivered(t *testing.T, r *receiver, n int, seq uint64, what string) {
	t.Helper()
	testproc.WaitFor(t, 60*time.Second, what, func() (bool, string) {
		got := r.firsts()
		for _, d := range got {
			if d.n == n {
				return d.seq == seq, fmt.Sprintf("notification %d delivered at sequence %d, want %d", n, d.seq, seq)
			}
		}
		return false, fmt.Sprintf("delivered %v", got)
	})
}

// An edge started without a channels file serves the origin's channels:
// subscriptions to them are taken and get what is published at the
// origin and through the edge, at the origin's sequences; a topic the
// origin does not serve is refused as the origin refuses it; the edge's
// admin API refuses channel writes, and an edge given a channels file
// refuses to start, saying why.
func TestEdgeChannels_TheOriginsChannelsAtTheEdge(t *testing.T) {
	t.Parallel()
	origin, leaf := originWithLeaf(t, writeChannels(t, "chA", topicA, "chB", topicB))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p)
	edge.awaitReadyz(200, "ready", 60*time.Second)

	ra, rb := newReceiver(t), newReceiver(t)
	ra.subscribe(t, edge.hubProc, topicA)
	rb.subscribe(t, edge.hubProc, topicB)
	seqA := publishTo(t, origin.hubProc, topicA, 1)
	seqB := publishTo(t, edge.hubProc, topicB, 2) // through the edge
	awaitDelivered(t, ra, 1, seqA, "A's notification at the edge's subscriber of A")
	awaitDelivered(t, rb, 2, seqB, "B's notification (published through the edge) at the edge's subscriber of B")
	if got := ra.firsts(); len(got) != 1 {
		t.Fatalf("the subscriber of A got %v, want only notification 1", got)
	}

	const nowhere = "http://127.0.0.1:1/edge/nowhere"
	at, ae := subscribeOutcome(t, origin.hubProc, nowhere), subscribeOutcome(t, edge.hubProc, nowhere)
	t.Logf("a topic the origin does not serve: %q at both", at)
	if at == "verified" || ae != at {
		t.Fatalf("a topic the origin does not serve: the origin answered %q, the edge %q; want the same denial", at, ae)
	}

	code, body := edge.adminDo(http.MethodPost, "/admin/channels", `{"name":"mine","topic":"http://127.0.0.1:1/edge/mine","trust":"open"}`)
	if code != http.StatusConflict || !strings.Contains(body, "origin") {
		t.Fatalf("a channel created at the edge's admin API: %d %q, want 409 naming the origin", code, body)
	}
	if code, body := edge.adminDo(http.MethodGet, "/admin/channels", ""); code != 200 || !strings.Contains(body, "chA") || !strings.Contains(body, "chB") {
		t.Fatalf("the edge's channel listing: %d %.300s", code, body)
	}

	// an edge given a channels file of its own (one edited elsewhere)
	// refuses to start and says what to do
	other := startEdgeExpectingExit(t, origin, p, "--channels", writeChannels(t, "chA", topicA+"-elsewhere", "renamedB", topicB))
	if !strings.Contains(other, "takes its channels from its origin") {
		t.Fatalf("an edge with a channels file: %s", other)
	}
}

// startEdgeExpectingExit starts an edge with extra arguments that it must
// refuse, and returns its output once it exited.
func startEdgeExpectingExit(t *testing.T, origin *procHub, p *linkProxy, extra ...string) string {
	t.Helper()
	port := testenv.FreePort(t)
	args := hubArgs(t, port, filepath.Join(t.TempDir(), "refused"), append([]string{"--upstream", origin.url, "--upstream-leaf", p.URL(), "--nats-domain", "edge2"}, extra...)...)
	proc := testproc.Start(t, "refused-edge", bins.hub, args...)
	select {
	case <-proc.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("the edge did not exit:\n%s", proc.Output(2000))
	}
	return proc.Output(2000)
}

// Channels created, changed and deleted at the origin reach a running
// edge, also when they change while its link is cut (once it returns).
func TestEdgeChannels_FollowTheOriginAcrossACut(t *testing.T) {
	t.Parallel()
	origin, leaf := originWithLeaf(t, writeChannels(t, "chA", topicA))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p)
	edge.awaitReadyz(200, "ready", 60*time.Second)

	const topicC, topicD = "http://127.0.0.1:1/edge/c", "http://127.0.0.1:1/edge/d"
	awaitSubscribable(t, edge.hubProc, topicC, false, "C unknown at the edge")
	if code, body := origin.adminDo(http.MethodPost, "/admin/channels", `{"name":"chC","topic":"`+topicC+`","trust":"open"}`); code/100 != 2 {
		t.Fatalf("create C at the origin: %d %s", code, body)
	}
	awaitSubscribable(t, edge.hubProc, topicC, true, "C, created at the origin, at the edge")
	// changed: made private, so a subscription without a token is refused
	if code, body := origin.adminDo(http.MethodPost, "/admin/channels", `{"name":"chA","topic":"`+topicA+`","trust":"open","private":true}`); code/100 != 2 {
		t.Logf("making A private at the origin: %d %s (a hub without a subscriber key may refuse it)", code, body)
	} else {
		awaitSubscribable(t, edge.hubProc, topicA, false, "A, made private at the origin, refused without a token at the edge")
	}
	if code, body := origin.adminDo(http.MethodDelete, "/admin/channels/chC", ""); code/100 != 2 {
		t.Fatalf("delete C at the origin: %d %s", code, body)
	}
	awaitSubscribable(t, edge.hubProc, topicC, false, "C, deleted at the origin, gone at the edge")

	// while the link is cut: the edge answers what it mirrored
	const topicE = "http://127.0.0.1:1/edge/e"
	if code, body := origin.adminDo(http.MethodPost, "/admin/channels", `{"name":"chE","topic":"`+topicE+`","trust":"open"}`); code/100 != 2 {
		t.Fatalf("create E at the origin: %d %s", code, body)
	}
	awaitSubscribable(t, edge.hubProc, topicE, true, "E at the edge before the cut")
	p.Cut()
	edge.awaitReadyz(503, "stale", 60*time.Second)
	if code, body := origin.adminDo(http.MethodPost, "/admin/channels", `{"name":"chD","topic":"`+topicD+`","trust":"open"}`); code/100 != 2 {
		t.Fatalf("create D at the origin: %d %s", code, body)
	}
	if code, body := origin.adminDo(http.MethodDelete, "/admin/channels/chE", ""); code/100 != 2 {
		t.Fatalf("delete E at the origin: %d %s", code, body)
	}
	if o := subscribeOutcome(t, edge.hubProc, topicD); o == "verified" {
		t.Fatalf("D at the edge while its link is cut: %s", o)
	}
	if o := subscribeOutcome(t, edge.hubProc, topicE); o != "verified" {
		t.Fatalf("E, mirrored before the cut, at the edge while its link is cut: %s", o)
	}
	p.Restore()
	awaitSubscribable(t, edge.hubProc, topicD, true, "D, created at the origin during the cut, at the edge once the link returned")
	awaitSubscribable(t, edge.hubProc, topicE, false, "E, deleted at the origin during the cut, gone at the edge once the link returned")
	edge.awaitReadyz(200, "ready", 60*time.Second)
}

// --open-topics at an edge of an --open-topics origin creates the channel
// of a topic nobody named at the origin, as a thin ping to the origin's
// hub URL (never a write to the origin's buckets): the edge's subscriber
// gets what is published on it at the origin and through the edge.
func TestEdgeChannels_OpenTopicsCreateAtTheOrigin(t *testing.T) {
	t.Parallel()
	origin, leaf := originWithLeaf(t, writeChannels(t, "zed", topicA), "--open-topics")
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p, "--open-topics")
	edge.awaitReadyz(200, "ready", 60*time.Second)

	// a topic the origin's file names keeps the origin's channel
	ra := newReceiver(t)
	ra.subscribe(t, edge.hubProc, topicA)
	const fresh = "http://127.0.0.1:1/edge/fresh"
	rf := newReceiver(t)
	rf.subscribe(t, edge.hubProc, fresh)
	if code, body := origin.adminDo(http.MethodGet, "/admin/channels?q=fresh", ""); code != 200 || !strings.Contains(body, fresh) {
		t.Fatalf("the channel an edge's open topic created is not at the origin: %d %.300s", code, body)
	}
	if code, body := edge.adminDo(http.MethodGet, "/admin/channels", ""); code != 200 || strings.Count(body, `"zed"`) != 1 {
		t.Fatalf("the edge's channels: %d %.300s", code, body)
	}
	s1 := publishTo(t, origin.hubProc, fresh, 1)
	s2 := publishTo(t, edge.hubProc, fresh, 2)
	s3 := publishTo(t, edge.hubProc, topicA, 3)
	awaitDelivered(t, rf, 1, s1, "published at the origin on the open topic, at the edge's subscriber")
	awaitDelivered(t, rf, 2, s2, "published through the edge on the open topic, at the edge's subscriber")
	awaitDelivered(t, ra, 3, s3, "published through the edge on zed, at the edge's subscriber")
}

// --open-topics at an edge whose origin does not open topics: a
// subscription to a topic the origin does not serve is denied, as the
// origin would deny it, and no channel is created anywhere.
func TestEdgeChannels_OpenTopicsDeniedAsTheOriginWould(t *testing.T) {
	t.Parallel()
	origin, leaf := originWithLeaf(t, writeChannels(t, "zed", topicA))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p, "--open-topics")
	edge.awaitReadyz(200, "ready", 60*time.Second)

	const fresh = "http://127.0.0.1:1/edge/not-opened"
	if o := subscribeOutcome(t, edge.hubProc, fresh); !strings.HasPrefix(o, "denied") {
		t.Fatalf("a topic the origin does not open, at the edge: %s; want denied", o)
	}
	for _, h := range []*procHub{origin, edge} {
		if code, body := h.adminDo(http.MethodGet, "/admin/channels?q=not-opened", ""); code != 200 || strings.Contains(body, fresh) {
			t.Fatalf("%s has a channel for a topic the origin does not open: %d %.300s", h.name, code, body)
		}
	}
	awaitSubscribable(t, edge.hubProc, topicA, true, "the origin's channel at the edge")
}

// An edge started while its origin is down serves what it mirrored and
// says so; it picks up the origin's channel changes once the origin is
// back.
func TestEdge_StartedWhileTheOriginIsDown(t *testing.T) {
	t.Parallel()
	origin, leaf := originWithLeaf(t, writeChannels(t, "chA", topicA))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p)
	edge.awaitReadyz(200, "ready", 60*time.Second)
	r := newReceiver(t)
	r.subscribe(t, edge.hubProc, topicA)
	seq1 := publishTo(t, origin.hubProc, topicA, 1)
	awaitDelivered(t, r, 1, seq1, "before the outage")

	edge.proc.Stop(t)
	origin.proc.Stop(t)
	edge.proc.Restart(t)
	testproc.WaitFor(t, 90*time.Second, "the edge serving with its origin down", func() (bool, string) {
		code, body := edge.get("healthz")
		return code == 200, body
	})
	body := edge.awaitReadyz(503, "stale", 60*time.Second)
	if !strings.Contains(body, "channels as last mirrored") {
		t.Fatalf("the edge's /readyz with its origin down does not say what it serves: %q", body)
	}
	awaitSubscribable(t, edge.hubProc, topicA, true, "A at the edge, mirrored before the origin went down")
	const topicE = "http://127.0.0.1:1/edge/e"
	if o := subscribeOutcome(t, edge.hubProc, topicE); o == "verified" {
		t.Fatalf("a topic unknown to the mirror taken: %s", o)
	}

	origin.proc.Restart(t)
	origin.awaitReadyz(200, "ready", 90*time.Second)
	if code, body := origin.adminDo(http.MethodPost, "/admin/channels", `{"name":"chE","topic":"`+topicE+`","trust":"open"}`); code/100 != 2 {
		t.Fatalf("create E at the origin: %d %s", code, body)
	}
	awaitSubscribable(t, edge.hubProc, topicE, true, "E, created at the origin after it came back, at the edge")
	seq2 := publishTo(t, origin.hubProc, topicA, 2)
	awaitDelivered(t, r, 2, seq2, "after the origin came back")
}

// An edge next to a hub that takes no leaf links (no --leaf-listen) stops
// at once saying what the origin needs, instead of waiting out its
// startup timeout for an answer that cannot come.
func TestEdge_OriginWithoutLeafListenerSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	origin := startProcHub(t, "origin")
	closed := testenv.FreePort(t) // nothing listens there
	started := time.Now()
	port := testenv.FreePort(t)
	args := hubArgs(t, port, filepath.Join(t.TempDir(), "edge"), "--upstream", origin.url, "--upstream-leaf", fmt.Sprintf("nats-leaf://127.0.0.1:%d", closed), "--startup-timeout", "10m")
	proc := testproc.Start(t, "edge", bins.hub, args...)
	select {
	case <-proc.Done():
	case <-time.After(5 * time.Minute):
		t.Fatalf("the edge still waits after 5 minutes:\n%s", proc.Output(2000))
	}
	out := proc.Output(2000)
	if !strings.Contains(out, "--leaf-listen") {
		t.Fatalf("the edge's error does not name --leaf-listen:\n%s", out)
	}
	t.Logf("the edge exited after %v: %s", time.Since(started).Round(time.Millisecond), out[max(0, strings.LastIndex(out, "--leaf-listen")-300):])
}
