package admin_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

const fuzzAdmin = "fuzz-admin-token-0123456789"

// FuzzHubRequests drives every route of a hub with its admin API (the hub
// URL's forms, the admin API, hosted topics) with fuzzed methods, paths, query strings and
// form values, with a real log and store behind them. Whatever it is sent,
// the hub answers no 5xx but 502, 503 (and 501 for a redrive, as it runs
// without a delivery engine), a refusal carries a reason, the
// store and log still answer (no key or subject killed the connection), a
// valid notification is still accepted, and the log holds exactly what was
// acknowledged.
func FuzzHubRequests(f *testing.F) {
	f.Add("POST", "/", "hub.mode=subscribe&hub.topic=http%3A%2F%2Fa.example%2Ft&hub.callback=http%3A%2F%2Fb.example%2Fcb")
	f.Add("POST", "/", "hub.mode=publish&hub.url=http%3A%2F%2F127.0.0.1%3A1%2F"+strings.Repeat("a", 5000))
	f.Add("POST", "/", "hub.mode=subscribe&hub.topic="+strings.Repeat("%00", 3000)+"&hub.callback=x")
	f.Add("GET", "/admin/subscriptions/%00", "")
	f.Add("GET", "/admin/subscriptions?topic="+strings.Repeat("*.>", 1000), "")
	f.Add("DELETE", "/admin/channels/fuzz", "")
	f.Add("POST", "/admin/channels/fuzz/continuity/reset", `{"until":"9999-12-31T23:59:59Z"}`)
	f.Add("POST", "/admin/channels", `{"topic":"http://x.example/`+strings.Repeat("b", 9000)+`"}`)
	f.Add("GET", "/admin/subscriptions?limit=2&q=%00&status=expired&cursor=czM6", "")
	f.Add("GET", "/admin/subscriptions?status=failing&cursor=ZjA6MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY", "")
	f.Add("GET", "/admin/channels?limit=1&q=fuzz&cursor=YzA6aHR0cDovL3guZXhhbXBsZS8", "")
	f.Add("GET", "/admin/summary", "")
	f.Add("GET", "/topics/..%2f..", "")
	f.Add("POST", "/admin/subscriptions/0123456789abcdef0123456789abcdef/deadletters/x/redrive", "")
	z := newFuzzHub(f, func(c *hub.Config) { c.OpenTopics = true; c.MaxOpenChannels = 20 })
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if !validMethod(method) {
			method = http.MethodPost
		}
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // not a request line a server would read
		}
		req := httptest.NewRequest(method, fuzzHubURL[:len(fuzzHubURL)-1]+u.RequestURI(), strings.NewReader(body))
		if strings.HasPrefix(u.Path, "/admin") {
			req.Header.Set("Authorization", "Bearer "+fuzzAdmin)
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		z.mux.ServeHTTP(rec, req.WithContext(ctx))
		// 501: this hub runs without a delivery engine to redrive with
		if rec.Code >= 500 && rec.Code != http.StatusBadGateway && rec.Code != http.StatusServiceUnavailable && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %.200s answered %d %.300q", method, target, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && strings.TrimSpace(rec.Body.String()) == "" {
			t.Fatalf("%s %.200s answered %d without a reason", method, target, rec.Code)
		}
		if err := z.store.Ping(ctx); err != nil {
			t.Fatalf("after %s %.200s the store does not answer: %v", method, target, err)
		}
		// the demo channel may have been deleted by the fuzzed request
		if _, err := z.hub.PutChannel(ctx, hub.Channel{Topic: fuzzTopic, Name: "fuzz", Trust: hub.TrustOpen}); err != nil {
			t.Fatalf("after %s %.200s: channel: %v", method, target, err)
		}
		z.checkLog(t)
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
		return true
	}
	return false
}

const (
	fuzzHubURL = "http://hub.test/"
	fuzzTopic  = "http://127.0.0.1:1/fuzz/change/"
)

// fuzzHub is a hub with its admin API over a real embedded NATS log and KV
// store whose handler the fuzz target calls directly (so that any header
// value reaches it).
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
	api, err := admin.New(admin.Config{Token: fuzzAdmin, Hub: h, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	api.Register(mux)
	return &fuzzHub{hub: h, log: lg, store: st, mux: mux, acked: map[uint64][]byte{}}
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
