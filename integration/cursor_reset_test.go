package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// checkReset checks that f, a session's first frame with id (SSE; "" for
// WebSocket), is a reset naming the log's epoch and first..last and
// resuming before first. The log may have grown past last meanwhile (the
// hub appends framework notifications of its own), never fallen short.
func checkReset(t *testing.T, what string, f wire.Frame, id string, epoch string, first, last uint64) {
	t.Helper()
	r := f.Reset
	if r == nil || r.Epoch != epoch || r.First != first || r.Last < last || r.Since != first-1 ||
		r.ID != (wire.Cursor{Epoch: epoch, Seq: first - 1}).String() || (id != "" && id != r.ID) {
		t.Fatalf("%s: first frame %+v (reset %+v, id %q); want a reset naming epoch %s, %d..(at least %d)", what, f, r, id, epoch, first, last)
	}
}

// liveEpoch opens a WebSocket session at the log's end and returns the
// epoch its live frame's id names.
func liveEpoch(t *testing.T, hubURL string) (string, uint64) {
	t.Helper()
	f := wsFrames(t, hubURL, url.Values{wire.ParamChannels: {"*"}})()
	if f.Live == nil {
		t.Fatalf("first frame %+v, want live", f)
	}
	c, err := wire.ParseCursor(f.Live.ID)
	if err != nil || !wire.ValidEpoch(c.Epoch) || c.Seq != f.Live.Seq {
		t.Fatalf("live frame %+v: id %v", f.Live, err)
	}
	return c.Epoch, f.Live.Seq
}

// TestCursorReset_AheadOrFromARebuiltLog runs whole hubs on embedded NATS:
// a cursor ahead of the log (since= on /ws and /events, Last-Event-ID) is
// answered with a reset naming the log's first and last sequence and its
// epoch, then the log from its first record; a hub on a fresh data
// directory has another epoch, and an event id of the first hub presented
// to it gets the reset instead of a silent resume.
func TestCursorReset_AheadOrFromARebuiltLog(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := startDashHub(t)
	topic := h.url + "topics/demo"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var seqs []uint64
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		seqs = append(seqs, h.publishSeq(t, topic, at, at.Add(time.Minute), "https://example.org/r"))
	}
	epoch, last := liveEpoch(t, h.url)
	if last < seqs[2] {
		t.Fatalf("live at %d before the last publish %d", last, seqs[2])
	}
	demo := func(since string) url.Values {
		return url.Values{wire.ParamChannels: {"demo"}, wire.ParamSince: {since}}
	}

	ws := wsFrames(t, h.url, demo("5000"))
	checkReset(t, "WebSocket since=5000", ws(), "", epoch, 1, last)
	if got := notificationsUntil(t, ws, seqs[2]); len(got) != 3 || got[0] != seqs[0] {
		t.Errorf("WebSocket after the reset: notifications %v, want %v", got, seqs)
	}
	sse := sseFrames(t, ctx, h.url, demo("5000"), nil)
	f, id := sse()
	checkReset(t, "SSE since=5000", f, id, epoch, 1, last)
	sse = sseFrames(t, ctx, h.url, url.Values{wire.ParamChannels: {"demo"}}, http.Header{wire.HeaderLastEventID: {"5000"}})
	f, id = sse()
	checkReset(t, "SSE Last-Event-ID: 5000", f, id, epoch, 1, last)
	sseNext := func() wire.Frame { f, _ := sse(); return f }
	if got := notificationsUntil(t, sseNext, seqs[2]); len(got) != 3 || got[0] != seqs[0] {
		t.Errorf("SSE after the reset: notifications %v, want %v", got, seqs)
	}

	// an id of this log resumes silently
	sse = sseFrames(t, ctx, h.url, url.Values{wire.ParamChannels: {"demo"}},
		http.Header{wire.HeaderLastEventID: {wire.Cursor{Epoch: epoch, Seq: seqs[1]}.String()}})
	if f, id := sse(); f.Notification == nil || f.Notification.Seq != seqs[2] || id != (wire.Cursor{Epoch: epoch, Seq: seqs[2]}).String() {
		t.Fatalf("resuming with this log's id: first event %+v id %q; want notification %d", f, id, seqs[2])
	}

	// a hub on a fresh data directory: another log, another epoch
	fresh := startDashHub(t)
	fresh.publishSeq(t, fresh.url+"topics/demo", t0, t0.Add(time.Minute), "https://example.org/r")
	freshEpoch, freshLast := liveEpoch(t, fresh.url)
	if freshEpoch == epoch {
		t.Fatalf("a fresh data directory has the same epoch %s", epoch)
	}
	oldID := wire.Cursor{Epoch: epoch, Seq: 1}.String() // within the fresh log's range: only the epoch tells
	sse = sseFrames(t, ctx, fresh.url, url.Values{wire.ParamChannels: {"*"}}, http.Header{wire.HeaderLastEventID: {oldID}})
	f, id = sse()
	checkReset(t, "SSE Last-Event-ID of the old log", f, id, freshEpoch, 1, freshLast)
	ws = wsFrames(t, fresh.url, url.Values{wire.ParamChannels: {"*"}, wire.ParamSince: {oldID}})
	checkReset(t, "WebSocket since= of the old log", ws(), "", freshEpoch, 1, freshLast)
}

// TestCursorReset_WebhookIDCarriesTheEpoch subscribes with Standard
// Webhooks signatures and checks the webhook-id of a delivery:
// msg_<subscription>_<epoch>-<seq>, so a rebuilt log never repeats an id a
// receiver has seen.
func TestCursorReset_WebhookIDCarriesTheEpoch(t *testing.T) {
	h := startDashHub(t)
	topic := h.url + "topics/demo"
	var mu sync.Mutex
	var ids []string
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(r.URL.Query().Get("hub.challenge")))
			return
		}
		mu.Lock()
		ids = append(ids, r.Header.Get(wire.HeaderWebhookID))
		mu.Unlock()
	}))
	t.Cleanup(cb.Close)
	callback := cb.URL + "/cb"
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {callback},
		"hub.secret": {"a-secret-of-some-length"}, wire.ParamSignatureScheme: {wire.SchemeStandard}}
	if status, body := h.do(t, http.MethodPost, "/", "application/x-www-form-urlencoded", []byte(form.Encode()), nil); status != http.StatusAccepted {
		t.Fatalf("subscribe: %d %s", status, body)
	}
	subID := hub.SubscriptionID(topic, callback)
	admin := http.Header{"Authorization": {"Bearer " + h.token}}
	testenv.Eventually(t, 20*time.Second, func() bool {
		status, body := h.do(t, http.MethodGet, "/admin/subscriptions/"+subID, "", nil, admin)
		return status == http.StatusOK && strings.Contains(body, `"state": "active"`)
	}, "subscription active")
	epoch, _ := liveEpoch(t, h.url)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	seq := h.publishSeq(t, topic, t0, t0.Add(time.Minute), "https://example.org/r")
	want := "msg_" + subID + "_" + epoch + "-" + strconv.FormatUint(seq, 10)
	testenv.Eventually(t, 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if id == want {
				return true
			}
		}
		return false
	}, "a delivery with webhook-id %s", want)
}
