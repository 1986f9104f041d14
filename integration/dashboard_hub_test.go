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

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// dashHub is a hub started in-process for the dashboard tests.
type dashHub struct {
	url   string // hub URL, ends in /
	token string // admin token
}

// startDashHub runs a hub with embedded NATS on a temporary directory,
// loopback callbacks allowed and a short retry schedule, until the test
// ends. Each option edits the settings first.
func startDashHub(t *testing.T, options ...func(*server.Config)) *dashHub {
	t.Helper()
	token := "dashboard-test-token"
	opts := append([]func(*server.Config){func(c *server.Config) {
		c.MaxBody, c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost = 1<<20, 60, 3600, 86400, 4
		c.AdminToken, c.AllowNetworks, c.Retry, c.LogLevel = token, "127.0.0.0/8", "10ms,x2,max=50ms,attempts=3", "info"
	}}, options...)
	var cfg server.Config
	opts = append(opts, func(c *server.Config) { cfg = *c })
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := servertest.Start(t, logger, opts...)
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

// putChannel creates (or replaces: the --demo channel) an open, hosted
// channel through the admin API and returns its topic.
func (h *dashHub) putChannel(t *testing.T, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "hosted": true, "trust": "open"})
	status, resp := h.do(t, http.MethodPut, "/admin/channels/"+name, "application/json", body, http.Header{"Authorization": {"Bearer " + h.token}})
	if status != http.StatusCreated && status != http.StatusOK {
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
	body := dashNotification(from, until, entries...)
	if status, resp := h.post(t, topic, body); status != http.StatusOK {
		t.Fatalf("publish %s %s..%s: %d %s", topic, from, until, status, resp)
	}
	return body
}

// post sends body as a fat ping on topic and returns the answer.
func (h *dashHub) post(t *testing.T, topic string, body []byte) (int, string) {
	t.Helper()
	link := http.Header{"Link": {fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, topic, h.url)}}
	return h.do(t, http.MethodPost, "/", "application/xml", body, link)
}

// dashNotification renders a change notification covering from..until,
// one entry a second after from.
func dashNotification(from, until time.Time, entries ...dashEntry) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` + "\n")
	fmt.Fprintf(&b, `  <rs:md capability="change-notification" from="%s" until="%s"/>`+"\n", from.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	for i, e := range entries {
		at := from.Add(time.Duration(i+1) * time.Second).UTC().Format(time.RFC3339)
		fmt.Fprintf(&b, "  <url><loc>%s</loc><rs:md change=%q datetime=%q/></url>\n", e.loc, e.change, at)
	}
	b.WriteString("</urlset>\n")
	return []byte(b.String())
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

// TestDashboard_ContinuityAnchorReset drives the continuity dialog in
// headless Chromium as an operator would: a Source that started again from
// an earlier time is refused with 409; the operator opens the channel's
// dialog, sees its anchor, resets it (nothing happens before the
// confirmation), and the Source's notification is accepted. A reset to a
// typed instant, and one the hub refuses, go the same way.
func TestDashboard_ContinuityAnchorReset(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := startDashHub(t)
	books := h.putChannel(t, "books")
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	h.publish(t, books, t0, t0.Add(20*time.Minute), dashEntry{"https://library.example.org/books/emma", "created"})
	rewound := dashNotification(t0, t0.Add(10*time.Minute), dashEntry{"https://library.example.org/books/emma", "updated"})
	if status, resp := h.post(t, books, rewound); status != http.StatusConflict || !strings.Contains(resp, "/continuity") {
		t.Fatalf("a notification before the anchor: %d %s, want 409 pointing at the continuity endpoint", status, resp)
	}
	continuity := func() (anchored bool, lastSeq uint64) {
		status, body := h.do(t, http.MethodGet, "/admin/channels/books/continuity", "", nil, http.Header{"Authorization": {"Bearer " + h.token}})
		if status != http.StatusOK {
			t.Fatalf("GET continuity: %d %s", status, body)
		}
		var v struct {
			Anchored bool
			LastSeq  uint64
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		return v.Anchored, v.LastSeq
	}
	anchored := func() bool { a, _ := continuity(); return a }
	// The log's sequence is shared by every channel, the hub's framework
	// channels included (their announcements of the channels created), so
	// the books notification's seq is read, not assumed to be 1.
	_, seq := continuity()

	b := newDashBrowser(t, 2*time.Minute)
	row := `#channels tr[data-channel="books"]`
	b.run("open the dashboard", chromedp.Navigate(strings.TrimSuffix(h.url, "/")+"/dashboard/#token="+h.token))
	b.waitFor("the books channel with its last until", 20*time.Second,
		fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === "2025-03-14 09:20:00Z"`, row+" td:nth-child(5)"))
	b.run("click Anchor…", browsertest.Click(row+" button.continuity"))
	b.waitFor("the dialog showing the anchor", 10*time.Second, `(() => {
		const d = document.querySelector("#continuity");
		return !d.hidden && d.dataset.loaded === "true" && d.dataset.channel === "books" &&
			document.querySelector("#cont-anchor").textContent === "2025-03-14 09:20:00Z" &&
			document.querySelector("#cont-seq").textContent === "`+fmt.Sprint(seq)+`" &&
			document.querySelector("#cont-last-reset").textContent === "never";
	})()`)
	b.screenshot("5_continuity_anchor")

	// Reset asks first; until confirmed nothing changes.
	b.run("click Reset anchor…", browsertest.Click("#cont-reset"))
	b.waitFor("the confirmation", 5*time.Second, `!document.querySelector("#cont-confirm").hidden &&
		document.querySelector("#cont-confirm-text").textContent.includes("anchor of books from 2025-03-14 09:20:00Z to none")`)
	if !anchored() {
		t.Fatal("the anchor was reset before the confirmation")
	}
	b.screenshot("6_continuity_confirm")
	b.run("confirm", browsertest.Click("#cont-confirm-button"))
	b.waitFor("the anchor cleared", 10*time.Second, `document.querySelector("#cont-confirm").hidden &&
		document.querySelector("#cont-anchor").textContent.startsWith("none") &&
		document.querySelector("#cont-last-reset").textContent.includes("2025-03-14 09:20:00Z → none (at seq `+fmt.Sprint(seq)+`)") &&
		document.querySelector("#toast").textContent === "Continuity anchor of books cleared"`)
	if anchored() {
		t.Fatal("the hub still has an anchor after the confirmed reset")
	}
	b.waitFor("the channels table without a last until", 10*time.Second,
		fmt.Sprintf(`document.querySelector(%q).textContent === "—"`, row+" td:nth-child(5)"))
	if status, resp := h.post(t, books, rewound); status != http.StatusOK {
		t.Fatalf("the Source's notification after the reset: %d %s", status, resp)
	}

	// A reset to a typed instant; one in the future is refused with the reason.
	for _, tc := range []struct{ until, want string }{
		{"9999-12-31T23:59:59Z", `document.querySelector("#cont-error").textContent.includes("in the future") && document.querySelector("#cont-anchor").textContent === "2025-03-14 09:10:00Z"`},
		{"2025-03-14T09:30:00Z", `document.querySelector("#cont-anchor").textContent === "2025-03-14 09:30:00Z" && document.querySelector("#toast").textContent === "Continuity anchor of books set to 2025-03-14 09:30:00Z"`},
	} {
		b.run("reopen the dialog", browsertest.Click("#cont-close"), browsertest.Click(row+" button.continuity"))
		b.waitFor("the dialog loaded", 10*time.Second, `document.querySelector("#continuity").dataset.loaded === "true" && document.querySelector("#cont-anchor").textContent === "2025-03-14 09:10:00Z"`)
		b.run("type "+tc.until+" and reset", chromedp.SendKeys(chromedp.CSS("#cont-until"), tc.until), browsertest.Click("#cont-reset"))
		b.waitFor("the confirmation naming "+tc.until, 5*time.Second,
			fmt.Sprintf(`document.querySelector("#cont-confirm-text").textContent.includes("must start at %s")`, tc.until))
		b.run("confirm", browsertest.Click("#cont-confirm-button"))
		b.waitFor("the outcome of "+tc.until, 10*time.Second, tc.want)
	}
	h.publish(t, books, t0.Add(30*time.Minute), t0.Add(40*time.Minute), dashEntry{"https://library.example.org/books/persuasion", "created"})
	if status, resp := h.post(t, books, dashNotification(t0.Add(10*time.Minute), t0.Add(20*time.Minute))); status != http.StatusConflict {
		t.Fatalf("before the new anchor: %d %s, want 409", status, resp)
	}
	b.run("close the dialog", browsertest.Click("#cont-close"))
	b.waitFor("the dialog closed", 5*time.Second, `document.querySelector("#continuity").hidden`)
	b.screenshot("7_continuity_reset")
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
