package hub_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

const (
	fuzzHubURL = "http://hub.test/"
	fuzzTopic  = "http://127.0.0.1:1/fuzz/change/"
)

// fuzzHub is a hub over a real embedded NATS log and KV store whose
// handler the fuzz target calls directly (so that any header value reaches
// it), with the notifications it acknowledged.
type fuzzHub struct {
	hub   *hub.Hub
	log   hub.Log
	store hub.Store
	mux   *http.ServeMux
	acked map[uint64][]byte // what a 200 said the log holds, by sequence
}

func newFuzzHub(tb testing.TB, options ...func(*hub.Config)) *fuzzHub {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	_, nc := testenv.NATS(tb)
	lg, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = lg.Close() })
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := netguard.ParsePolicy(nil)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := hub.Config{HubURL: fuzzHubURL, Store: st, Log: lg, Client: netguard.NewClient(pol, netguard.Timeouts{}),
		MaxBody: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range options {
		o(&cfg)
	}
	h, err := hub.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := h.PutChannel(ctx, hub.Channel{Topic: fuzzTopic, Name: "fuzz", Trust: hub.TrustOpen}); err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	return &fuzzHub{hub: h, log: lg, store: st, mux: mux, acked: map[uint64][]byte{}}
}

// post sends a fat ping to the handler and records what it acknowledged.
func (z *fuzzHub) post(t *testing.T, body []byte, link string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, fuzzHubURL, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/xml")
	req.Header["Link"] = []string{link}
	rec := httptest.NewRecorder()
	z.mux.ServeHTTP(rec, req)
	resp := rec.Body.String()
	if rec.Code == http.StatusOK && strings.HasPrefix(resp, "stored seq ") {
		seq, err := strconv.ParseUint(rec.Header().Get("Rshub-Seq"), 10, 64)
		if err != nil {
			t.Fatalf("200 without a sequence: %q", rec.Header().Get("Rshub-Seq"))
		}
		if _, ok := z.acked[seq]; ok {
			t.Fatalf("seq %d acknowledged twice", seq)
		}
		z.acked[seq] = append([]byte(nil), body...)
	}
	return rec.Code, resp
}

// checkLog fails unless the log holds exactly the acknowledged notifications.
func (z *fuzzHub) checkLog(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, last, err := z.log.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last != uint64(len(z.acked)) {
		t.Fatalf("the log holds %d records, %d were acknowledged", last, len(z.acked))
	}
	if last == 0 {
		return
	}
	rec, err := z.log.Next(ctx, "fuzz", last)
	if err != nil || rec.Seq != last || string(rec.Body) != string(z.acked[last]) {
		t.Fatalf("log record %d (%v) is not the body acknowledged", last, err)
	}
}

// fuzzLinks is the Link header of a correct fat ping.
const fuzzLinks = `<` + fuzzTopic + `>; rel="self", <` + fuzzHubURL + `>; rel="hub"`

// FuzzFatPing drives the fat-ping handler, with a real log behind it, with
// mutated notification bodies and Link headers. Whatever it is sent, the
// hub answers no 5xx but 503, keeps the channel's anchor within the clock
// skew limit, still accepts a valid notification right after (one that
// starts at the anchor), and its log holds exactly what it acknowledged.
func FuzzFatPing(f *testing.F) {
	f.Add([]byte(notif("change-notification", t0, t1, "2013-01-03T00:07:22Z")), fuzzLinks)
	f.Add([]byte(notif("change-notification", "2014-01-01T00:00:00Z", "9999-12-31T23:59:59Z")), fuzzLinks)
	f.Add([]byte("<urlset><rs:md"), `<`+fuzzTopic+`>; rel="self"`)
	z := newFuzzHub(f)
	f.Fuzz(func(t *testing.T, body []byte, link string) {
		status, resp := z.post(t, body, link)
		if status >= 500 && status != http.StatusServiceUnavailable {
			t.Fatalf("fuzzed publish answered %d %q", status, resp)
		}
		z.checkLog(t)
		// the channel is not wedged: a notification that starts at its
		// anchor is accepted
		st, err := z.hub.ChannelState(context.Background(), fuzzTopic)
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			t.Fatal(err)
		}
		anchor := st.LastUntil
		if limit := time.Now().Add(hub.DefaultMaxClockSkew); anchor.After(limit) {
			t.Fatalf("the anchor %v is beyond the clock skew limit: every correctly dated notification would be refused", anchor)
		}
		if anchor.IsZero() {
			anchor = mustTime(t0)
		}
		at := anchor.UTC().Format(time.RFC3339Nano)
		valid := notif("change-notification", at, at)
		if status, resp := z.post(t, []byte(valid), fuzzLinks); status != http.StatusOK {
			t.Fatalf("a valid notification after the fuzzed one: %d %q", status, resp)
		}
		z.checkLog(t)
	})
}
