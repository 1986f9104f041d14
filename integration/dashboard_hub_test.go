package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/app"
	"github.com/rshub/rshub/internal/testhub"
)

// dashHub is a hub started in-process for the dashboard tests.
type dashHub struct {
	url   string // hub URL, ends in /
	token string // admin token
}

// startDashHub runs a hub with embedded NATS on a temporary directory,
// loopback callbacks allowed and a short retry schedule, until the test
// ends. Each option edits the settings first.
func startDashHub(t *testing.T, options ...func(*app.Config)) *dashHub {
	t.Helper()
	token := "dashboard-test-token"
	opts := append([]func(*app.Config){func(c *app.Config) {
		c.MaxBody, c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost = 1<<20, 60, 3600, 86400, 4
		c.AdminToken, c.AllowNetworks, c.Retry, c.LogLevel = token, "127.0.0.0/8", "10ms,x2,max=50ms,attempts=3", "info"
	}}, options...)
	var cfg app.Config
	opts = append(opts, func(c *app.Config) { cfg = *c })
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := testhub.Start(t, logger, opts...)
	return &dashHub{url: s.HubURL, token: cfg.AdminToken}
}

// testWriter sends log lines to t.Log while the test runs.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// do sends a request and returns the status and body.
func (h *dashHub) do(t *testing.T, method, path, contentType string, body []byte, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(h.url, "/")+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hdr := header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	req.Header = hdr
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// putChannel creates an open, hosted channel through the admin API and
// returns its topic.
func (h *dashHub) putChannel(t *testing.T, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "hosted": true, "trust": "open"})
	status, resp := h.do(t, http.MethodPost, "/admin/channels", "application/json", body, http.Header{"Authorization": {"Bearer " + h.token}})
	if status != http.StatusCreated {
		t.Fatalf("create channel %s: %d %s", name, status, resp)
	}
	var c struct{ Topic string }
	if err := json.Unmarshal([]byte(resp), &c); err != nil || c.Topic == "" {
		t.Fatalf("create channel %s: %s: %v", name, resp, err)
	}
	return c.Topic
}

// subscribe asks for a subscription of callback to topic (verification
// follows asynchronously).
func (h *dashHub) subscribe(t *testing.T, topic, callback string) {
	t.Helper()
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {callback}}
	if status, body := h.do(t, http.MethodPost, "/", "application/x-www-form-urlencoded", []byte(form.Encode()), nil); status != http.StatusAccepted {
		t.Fatalf("subscribe: %d %s", status, body)
	}
}

// dashEntry is one <url> of a published notification.
type dashEntry struct{ loc, change string }

// publish posts a change notification covering from..until with entries
// and returns its body.
func (h *dashHub) publish(t *testing.T, topic string, from, until time.Time, entries ...dashEntry) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` + "\n")
	fmt.Fprintf(&b, `  <rs:md capability="change-notification" from="%s" until="%s"/>`+"\n", from.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	for i, e := range entries {
		at := from.Add(time.Duration(i+1) * time.Second).UTC().Format(time.RFC3339)
		fmt.Fprintf(&b, "  <url><loc>%s</loc><rs:md change=%q datetime=%q/></url>\n", e.loc, e.change, at)
	}
	b.WriteString("</urlset>\n")
	body := []byte(b.String())
	link := http.Header{"Link": {fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, topic, h.url)}}
	if status, resp := h.do(t, http.MethodPost, "/", "application/xml", body, link); status != http.StatusOK {
		t.Fatalf("publish %s %s..%s: %d %s", topic, from, until, status, resp)
	}
	return body
}

// dashCallback is a subscriber's callback: it confirms verifications and
// answers deliveries with a status the test sets.
type dashCallback struct {
	srv *httptest.Server

	mu       sync.Mutex
	status   int
	received [][]byte // bodies answered with 2xx
}

func newDashCallback(t *testing.T, status int) *dashCallback {
	c := &dashCallback{status: status}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		st := c.status
		if st/100 == 2 {
			c.received = append(c.received, body)
		}
		c.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *dashCallback) setStatus(s int) {
	c.mu.Lock()
	c.status = s
	c.mu.Unlock()
}

// got reports whether the callback accepted body.
func (c *dashCallback) got(body []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.received {
		if bytes.Equal(b, body) {
			return true
		}
	}
	return false
}
