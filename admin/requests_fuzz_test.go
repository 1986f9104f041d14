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
	"github.com/rshub/rshub/internal/hubtest"
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
	f.Add("PATCH", "/admin/subscriptions/0123456789abcdef0123456789abcdef", `{"rate": 2.5}`)
	f.Add("PATCH", "/admin/subscriptions/0123456789abcdef0123456789abcdef", `{"rate": 1e400}`)
	f.Add("POST", "/", "hub.mode=subscribe&hub.topic=http%3A%2F%2Fa.example%2Ft&hub.callback=http%3A%2F%2Fb.example%2Fcb&rshub.rate=0x1p-2")
	var st hub.Store
	z := hubtest.NewIntake(f, func(c *hub.Config) { c.OpenTopics = true; c.MaxOpenChannels = 20; st = c.Store }, func(h *hub.Hub, mux *http.ServeMux) {
		api, err := admin.New(admin.Config{Token: fuzzAdmin, Hub: h, Store: st, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			f.Fatal(err)
		}
		api.Register(mux)
	})
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
		req := httptest.NewRequest(method, hubtest.IntakeURL[:len(hubtest.IntakeURL)-1]+u.RequestURI(), strings.NewReader(body))
		if strings.HasPrefix(u.Path, "/admin") {
			req.Header.Set("Authorization", "Bearer "+fuzzAdmin)
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		z.Mux.ServeHTTP(rec, req.WithContext(ctx))
		// 501: this hub runs without a delivery engine to redrive with
		if rec.Code >= 500 && rec.Code != http.StatusBadGateway && rec.Code != http.StatusServiceUnavailable && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %.200s answered %d %.300q", method, target, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && strings.TrimSpace(rec.Body.String()) == "" {
			t.Fatalf("%s %.200s answered %d without a reason", method, target, rec.Code)
		}
		if err := z.Store.Ping(ctx); err != nil {
			t.Fatalf("after %s %.200s the store does not answer: %v", method, target, err)
		}
		// the demo channel may have been deleted by the fuzzed request
		if _, err := z.Hub.PutChannel(ctx, hub.Channel{Topic: hubtest.IntakeTopic, Name: "fuzz", Trust: hub.TrustOpen}); err != nil {
			t.Fatalf("after %s %.200s: channel: %v", method, target, err)
		}
		z.CheckLog(t)
	})
}

func validMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
		return true
	}
	return false
}
