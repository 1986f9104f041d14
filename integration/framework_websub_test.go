package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

const fwIntegrationToken = "framework-integration-token-0123456789"

// fwCallback is a WebSub subscriber: it confirms intent and keeps each
// delivery's body by its Rshub-Seq (a redelivery has the same sequence).
type fwCallback struct {
	mu       sync.Mutex
	verified bool
	bySeq    map[string][]byte
	order    []string
}

func (c *fwCallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		c.mu.Lock()
		c.verified = c.verified || r.URL.Query().Get("hub.mode") == "subscribe"
		c.mu.Unlock()
		_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
		return
	}
	b, _ := io.ReadAll(r.Body)
	seq := r.Header.Get("Rshub-Seq")
	c.mu.Lock()
	if _, ok := c.bySeq[seq]; !ok {
		c.order = append(c.order, seq)
	}
	c.bySeq[seq] = b
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// bodies returns the distinct deliveries in the order they first came.
func (c *fwCallback) bodies() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for _, s := range c.order {
		out = append(out, c.bySeq[s])
	}
	return out
}

// fwPublish publishes one change notification of one entry to topic.
func fwPublish(t *testing.T, hubURL, topic string, i int, from, until time.Time) {
	t.Helper()
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/r%d</loc><rs:md change="created" datetime="%s"/></url>
</urlset>
`, from.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), i, until.Format(time.RFC3339Nano))
	req, _ := http.NewRequest(http.MethodPost, hubURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Authorization", "Bearer "+fwIntegrationToken)
	req.Header.Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, topic, hubURL))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("publish %d: %d %s", i, resp.StatusCode, b)
	}
}

// A real hub process rotating its Change Lists every two entries announces
// each rotation on the channel's framework topic: a WebSub subscriber of
// that topic receives exactly one framework notification per rotation,
// each strictly valid, including a rotation published just before the hub
// is killed with SIGKILL (announced by the restarted process) and the
// rotations after the restart.
func TestFramework_WebSubOneNotificationPerRotationAcrossHubRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a hub process")
	}
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	root := t.TempDir()
	bin, err := testproc.Build(root, "hub", "./cmd/hub")
	if err != nil {
		t.Fatal(err)
	}
	port, natsPort := testenv.FreePort(t), testenv.FreePort(t)
	hubURL := fmt.Sprintf("http://127.0.0.1:%d/", port)
	topic := hubURL + "topics/fw"
	channels := filepath.Join(root, "channels.json")
	ch := fmt.Sprintf(`[{"topic": %q, "name": "fw", "hosted": true, "trust": "token", "token": %q}]`, topic, fwIntegrationToken)
	if err := os.WriteFile(channels, []byte(ch), 0o644); err != nil {
		t.Fatal(err)
	}
	hub := testproc.Start(t, "hub", bin, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--data-dir", filepath.Join(root, "data"),
		"--nats-listen", fmt.Sprintf("127.0.0.1:%d", natsPort), "--channels", channels, "--allow-networks", "127.0.0.0/8",
		"--retry", "100ms,x2,max=400ms,attempts=20,jitter=0.1", "--rotate-entries", "2", "--log-level", "warn", "--shutdown-timeout", "5s")
	testproc.WaitHTTP(t, hub, hubURL+"readyz", 30*time.Second)

	cb := &fwCallback{bySeq: map[string][]byte{}}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	fwTopic := hubURL + "topics/fw-framework"
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {fwTopic}, "hub.callback": {srv.URL + "/cb"}, "hub.lease_seconds": {"3600"}}
	resp, err := http.PostForm(hubURL, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe to %s: %d", fwTopic, resp.StatusCode)
	}
	waitFor(t, 10*time.Second, "verification of intent", func() bool { cb.mu.Lock(); defer cb.mu.Unlock(); return cb.verified })

	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	n := 0
	publish := func(k int) {
		for range k {
			n++
			fwPublish(t, hubURL, topic, n, at(n-1), at(n))
		}
	}
	// 1 entry a notification, 2 a list: the notification opening list k+1
	// (numbers 3, 5, 7, …) closes list k, whose until is that of number 2k
	publish(5) // two rotations
	waitFor(t, 20*time.Second, "two framework notifications", func() bool { return fwRotations(cb.bodies()) >= 2 })
	publish(2) // a third rotation, then SIGKILL at once
	hub.Signal(syscall.SIGKILL)
	<-hub.Done()
	hub.Restart(t)
	testproc.WaitHTTP(t, hub, hubURL+"readyz", 30*time.Second)
	publish(2) // a fourth
	waitFor(t, 30*time.Second, "four framework notifications", func() bool { return fwRotations(cb.bodies()) >= 4 })
	time.Sleep(2 * time.Second) // nothing more may come
	var got [][]byte            // the rotations' notifications
	added := 0                  // the channel's own addition, announced once
	for k, b := range cb.bodies() {
		doc, err := changefeed.Parse(bytes.NewReader(b), changefeed.Options{Mode: changefeed.Strict})
		if err != nil {
			t.Fatalf("framework notification %d does not validate strictly: %v\n%s", k+1, err, b)
		}
		if !mirror.IsFramework(doc) {
			t.Fatalf("notification %d: capability %q", k+1, doc.MD.Capability)
		}
		if mirror.ClosedUntil(doc).IsZero() {
			added++
			continue
		}
		got = append(got, b)
	}
	if len(got) != 4 || added > 1 {
		t.Fatalf("%d framework notifications for 4 rotations, %d for the channel's addition (at most 1)", len(got), added)
	}
	for k, b := range got {
		doc, _ := changefeed.Parse(bytes.NewReader(b), changefeed.Options{Mode: changefeed.Strict})
		if c, want := mirror.ClosedUntil(doc), at(2*(k+1)); !c.Equal(want) {
			t.Fatalf("notification %d announces a list closed at %v, want %v\n%s", k+1, c, want, b)
		}
	}
	// the hosted framework topic answers the latest one
	r, err := http.Get(fwTopic)
	if err != nil {
		t.Fatal(err)
	}
	latest, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || !bytes.Equal(latest, got[3]) {
		t.Fatalf("GET %s: %d\n%s\nwant the latest framework notification\n%s", fwTopic, r.StatusCode, latest, got[3])
	}
}

// fwRotations counts the bodies announcing a closed Change List.
func fwRotations(bodies [][]byte) int {
	n := 0
	for _, b := range bodies {
		if doc, err := changefeed.Parse(bytes.NewReader(b), changefeed.Options{}); err == nil && !mirror.ClosedUntil(doc).IsZero() {
			n++
		}
	}
	return n
}
