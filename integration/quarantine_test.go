package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

// withNATSListener gives the hub an external NATS server of the test's,
// whose clients may do everything (the hub's embedded server lets no one
// but the hub write the log), and returns its URL, so the test can write
// the log past the hub's writer.
func withNATSListener(t *testing.T) (func(*server.Config), string) {
	t.Helper()
	ns := testenv.RestartableNATS(t)
	return func(c *server.Config) { c.NATSURL = ns.URL() }, ns.URL()
}

// wsFrames dials a WebSocket session on the hub and returns a reader of its
// frames.
func wsFrames(t *testing.T, hubURL string, q url.Values) func() wire.Frame {
	t.Helper()
	u := "ws" + strings.TrimPrefix(strings.TrimSuffix(hubURL, "/"), "http") + wire.PathWebSocket + "?" + q.Encode()
	c, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return func() wire.Frame {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		f, err := wire.DecodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
}

// sseFrames opens /events on the hub and returns a reader of its frames
// with their event ids.
func sseFrames(t *testing.T, ctx context.Context, hubURL string, q url.Values, hdr http.Header) func() (wire.Frame, string) {
	t.Helper()
	resp, r := openHubEvents(t, ctx, hubURL, q, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("open events: %d", resp.StatusCode)
	}
	return func() (wire.Frame, string) {
		t.Helper()
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		f, err := wire.DecodeFrame([]byte(ev.Data))
		if err != nil {
			t.Fatal(err)
		}
		return f, ev.ID
	}
}

// notificationsUntil reads frames until a notification with seq >= last
// and returns the notifications' sequences.
func notificationsUntil(t *testing.T, next func() wire.Frame, last uint64) []uint64 {
	t.Helper()
	var got []uint64
	for {
		f := next()
		if f.Notification != nil {
			got = append(got, f.Notification.Seq)
			if f.Notification.Seq >= last {
				return got
			}
		}
	}
}

// publishSeq publishes a change notification on topic and returns its
// sequence.
func (h *dashHub) publishSeq(t *testing.T, topic string, from, until time.Time, loc string) uint64 {
	t.Helper()
	body := dashNotification(from, until, dashEntry{loc, "updated"})
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", `<`+topic+`>; rel="self", <`+h.url+`>; rel="hub"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	seq, err := strconv.ParseUint(resp.Header.Get(wire.HeaderSeq), 10, 64)
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("publish %s: %d, seq %q", loc, resp.StatusCode, resp.Header.Get(wire.HeaderSeq))
	}
	return seq
}

// TestQuarantine_MalformedLogMessageBlocksNoReader writes a message no
// reader can decode straight into the log's stream, past the hub's writer,
// then publishes good notifications after it, and checks every reader of
// the log: the webhook subscription, a live WebSocket and a live
// Server-Sent Events session, a session replaying from the start, and the
// open pull-mode Change List all carry the good notifications; the
// message is counted once in rshub_log_quarantined_total and listed at
// GET /admin/quarantine.
func TestQuarantine_MalformedLogMessageBlocksNoReader(t *testing.T) {
	natsOpt, natsURL := withNATSListener(t)
	h := startDashHub(t, natsOpt)
	topic := h.url + "topics/demo"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := http.Header{"Authorization": {"Bearer " + h.token}}

	cb := newDashCallback(t, http.StatusOK)
	callback := cb.srv.URL + "/cb"
	h.subscribe(t, topic, callback)
	subID := hub.SubscriptionID(topic, callback)
	testenv.Eventually(t, 20*time.Second, func() bool {
		status, body := h.do(t, http.MethodGet, "/admin/subscriptions/"+subID, "", nil, admin)
		return status == http.StatusOK && strings.Contains(body, `"state": "active"`)
	}, "subscription active")

	live := url.Values{wire.ParamChannels: {"demo"}}
	ws := wsFrames(t, h.url, live)
	if f := ws(); f.Live == nil {
		t.Fatalf("first WebSocket frame %+v, want live", f)
	}
	sse := sseFrames(t, ctx, h.url, live, nil)
	if f, _ := sse(); f.Live == nil {
		t.Fatalf("first event %+v, want live", f)
	}

	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	before := h.publishSeq(t, topic, t0, t0.Add(time.Minute), "https://example.org/before")

	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	bad := dashNotification(t0.Add(time.Minute), t0.Add(2*time.Minute), dashEntry{"https://example.org/bad", "updated"})
	ack, err := js.PublishMsg(ctx, &nats.Msg{
		Subject: wire.Subject(wire.SubjectPrefix, "demo"),
		Header:  nats.Header{wire.HeaderChannel: {"demo"}, wire.HeaderUntil: {"not a time"}},
		Data:    bad,
	})
	if err != nil {
		t.Fatal(err)
	}

	var good []uint64
	for i, loc := range []string{"https://example.org/after1", "https://example.org/after2"} {
		at := t0.Add(time.Duration(1+i) * time.Minute) // the quarantined message never counted
		good = append(good, h.publishSeq(t, topic, at, at.Add(time.Minute), loc))
	}
	last := good[len(good)-1]
	want := []uint64{before, good[0], good[1]}
	if got := notificationsUntil(t, ws, last); !slices.Equal(got, want) {
		t.Errorf("live WebSocket notifications %v, want %v", got, want)
	}
	sseNext := func() wire.Frame { f, _ := sse(); return f }
	if got := notificationsUntil(t, sseNext, last); !slices.Equal(got, want) {
		t.Errorf("live SSE notifications %v, want %v", got, want)
	}
	replay := wsFrames(t, h.url, url.Values{wire.ParamChannels: {"demo"}, wire.ParamSince: {"0"}})
	if got := notificationsUntil(t, replay, last); !slices.Equal(got, want) {
		t.Errorf("replayed notifications %v, want %v", got, want)
	}
	testenv.Eventually(t, 20*time.Second, func() bool {
		return cb.got(dashNotification(t0.Add(2*time.Minute), t0.Add(3*time.Minute), dashEntry{"https://example.org/after2", "updated"}))
	}, "webhook delivery of the notification after the quarantined message")
	testenv.Eventually(t, 20*time.Second, func() bool {
		status, body := h.do(t, http.MethodGet, wire.ChangeListPath("demo"), "", nil, nil)
		return status == http.StatusOK && strings.Contains(body, "https://example.org/after2") && !strings.Contains(body, "/bad<")
	}, "the open Change List holding the notifications after the quarantined message")

	if status, body := h.do(t, http.MethodGet, "/metrics", "", nil, nil); status != http.StatusOK || !strings.Contains(body, "\nrshub_log_quarantined_total 1\n") {
		t.Errorf("metrics: %d, want rshub_log_quarantined_total 1 in\n%s", status, grepLines(body, "quarantined"))
	}
	status, body := h.do(t, http.MethodGet, "/admin/quarantine", "", nil, admin)
	var q struct {
		Total   uint64              `json:"total"`
		Records []jslog.Quarantined `json:"records"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &q) != nil {
		t.Fatalf("GET /admin/quarantine: %d %s", status, body)
	}
	if q.Total != 1 || len(q.Records) != 1 || q.Records[0].Seq != ack.Sequence || q.Records[0].Channel != "demo" ||
		!strings.Contains(q.Records[0].Reason, wire.HeaderUntil) || q.Records[0].Size < len(bad) {
		t.Fatalf("GET /admin/quarantine = %s; want seq %d of demo with its reason and size", body, ack.Sequence)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
