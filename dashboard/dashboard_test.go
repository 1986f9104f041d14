package dashboard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func serve(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	New(cfg).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestDashboard_ServesThePageWithoutToken(t *testing.T) {
	srv := serve(t, Config{AdminToken: "s3cret", HubURL: "http://example.test/"})
	for path, want := range map[string]string{
		"/dashboard/":              "<title>rshub dashboard</title>",
		"/dashboard/app.js":        "askToken",
		"/dashboard/chart.js":      "rshubChart",
		"/dashboard/format.js":     "rshubFormat",
		"/dashboard/continuity.js": "rshubContinuity",
		"/dashboard/follow.js":     "Followed Sources",
		"/dashboard/subs.js":       "rshubSubs",
		"/dashboard/attempts.js":   "rshubAttempts",
		"/dashboard/attempts.css":  "#att-panel",
		"/dashboard/style.css":     "#feed",
	} {
		resp, body := get(t, srv.URL+path, "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body without %q", path, resp.StatusCode, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if strings.Contains(body, "s3cret") {
			t.Errorf("GET %s: the page holds the admin token", path)
		}
	}
}

func TestDashboard_APINeedsTheAdminToken(t *testing.T) {
	srv := serve(t, Config{AdminToken: "s3cret", HubURL: "http://example.test/", WSToken: "ws"})
	for _, path := range []string{"/dashboard/api/throughput", "/dashboard/api/config"} {
		for _, tok := range []string{"", "wrong", "s3cret2"} {
			if resp, _ := get(t, srv.URL+path, tok); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("GET %s with %q: %d, want 401 with WWW-Authenticate", path, tok, resp.StatusCode)
			}
		}
	}
	resp, body := get(t, srv.URL+"/dashboard/api/config", "s3cret")
	var cfg ClientConfig
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &cfg) != nil || cfg.WSToken != "ws" || cfg.HubURL != "http://example.test/" {
		t.Errorf("config: %d %s", resp.StatusCode, body)
	}
}

func TestDashboard_ThroughputIsTheRateSnapshot(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000, 0)}
	rate := NewRate(RateConfig{Window: time.Minute, Clock: clk.Now})
	rate.Published("demo", 100, time.Millisecond)
	srv := serve(t, Config{AdminToken: "s3cret", Rate: rate})
	resp, body := get(t, srv.URL+"/dashboard/api/throughput?seconds=3", "s3cret")
	var tp Throughput
	if err := json.Unmarshal([]byte(body), &tp); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	if tp.End != 2_000 || len(tp.Total) != 3 || tp.Total[2] != 1 || tp.Channels["demo"][2] != 1 {
		t.Errorf("throughput %+v", tp)
	}
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
}

func TestDashboard_RootRedirectsOnlyWhenTheHubDoesNotOwnIt(t *testing.T) {
	srv := serve(t, Config{AdminToken: "s3cret", HubURL: "http://example.test/hub"})
	resp, _ := get(t, srv.URL+"/", "")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/dashboard/" {
		t.Errorf("GET / with hub at /hub: %d to %q, want 302 to /dashboard/", resp.StatusCode, resp.Header.Get("Location"))
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hub") })
	New(Config{AdminToken: "s3cret", HubURL: "http://example.test/"}).Register(mux) // must not panic on a conflict
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Body.String() != "hub" {
		t.Errorf("GET / with hub at /: %q, want the hub's answer", rec.Body.String())
	}
}
