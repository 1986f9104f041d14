// Package tracing tests the hub's OpenTelemetry traces end to end: a whole
// hub exporting to a real Jaeger collector started by the test.
package tracing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

const adminToken = "tracing-test-token"

// callback confirms verifications and answers deliveries with the status
// of fail (200 when it returns 0), keeping each delivery's traceparent.
type callback struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCallback(t *testing.T, fail func(n int) int) *callback {
	c := &callback{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.seen = append(c.seen, r.Header.Get("traceparent"))
		n := len(c.seen)
		c.mu.Unlock()
		if s := fail(n); s != 0 {
			w.WriteHeader(s)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *callback) traceparents() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// do sends a request to the hub and returns the status and body.
func do(t *testing.T, method, u, contentType string, body string, hdr http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTracing_OneTraceFromPublishToEveryDelivery publishes with a
// traceparent to a hub exporting to Jaeger, with two webhook subscriptions
// (one failing its first attempt) and a Server-Sent Events session: Jaeger
// holds one trace, the Source's, with the intake span under the Source's
// span and every delivery attempt and the live send under the intake span;
// each POST and the event carry that trace.
func TestTracing_OneTraceFromPublishToEveryDelivery(t *testing.T) {
	j := startJaeger(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // export batches every 100 ms
	h := servertest.Start(t, nil, func(c *server.Config) {
		c.OTelEndpoint, c.AdminToken, c.AllowNetworks = j.otlp, adminToken, "127.0.0.0/8"
		c.Retry = "20ms,x2,max=100ms,attempts=5"
	})
	topic := h.HubURL + "topics/demo"
	failing := newCallback(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return 0
	})
	healthy := newCallback(t, func(int) int { return 0 })
	admin := http.Header{"Authorization": {"Bearer " + adminToken}}
	for _, cb := range []*callback{failing, healthy} {
		form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb.srv.URL + "/cb"}}
		if s, b := do(t, http.MethodPost, h.HubURL, "application/x-www-form-urlencoded", form.Encode(), nil); s != http.StatusAccepted {
			t.Fatalf("subscribe: %d %s", s, b)
		}
		id := hub.SubscriptionID(topic, cb.srv.URL+"/cb")
		testenv.Eventually(t, 20*time.Second, func() bool {
			s, b := do(t, http.MethodGet, h.HubURL+"admin/subscriptions/"+id, "", "", admin)
			return s == http.StatusOK && strings.Contains(b, `"state": "active"`)
		}, "subscription active")
	}
	events := openEvents(t, h.HubURL)

	traceID, sourceSpan := randomHex(16), randomHex(8)
	now := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	body := fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`+
		`<rs:md capability="change-notification" from="%s" until="%s"/>`+
		`<url><loc>https://example.org/r1</loc><rs:md change="updated" datetime="%s"/></url></urlset>`,
		now.Format(time.RFC3339), now.Add(time.Second).Format(time.RFC3339), now.Format(time.RFC3339))
	hdr := http.Header{"Link": {fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, topic, h.HubURL)},
		"Traceparent": {"00-" + traceID + "-" + sourceSpan + "-01"}}
	if s, b := do(t, http.MethodPost, h.HubURL, "application/xml", body, hdr); s != http.StatusOK {
		t.Fatalf("publish: %d %s", s, b)
	}
	frame := events()
	testenv.Eventually(t, 20*time.Second, func() bool {
		return len(failing.traceparents()) == 2 && len(healthy.traceparents()) == 1
	}, "deliveries")

	var spans []jaegerSpan
	count := func(name string) int {
		n := 0
		for _, s := range spans {
			if s.OperationName == name {
				n++
			}
		}
		return n
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		spans = j.trace(t, traceID)
		return count("rshub.intake") == 1 && count("rshub.webhook.post") == 3 && count("rshub.live.send") == 1 && count("rshub.commit") == 1
	}, "the publish's spans in Jaeger")

	t.Logf("trace %s in Jaeger: %d spans", traceID, len(spans))
	var intake jaegerSpan
	for _, s := range spans {
		if s.OperationName == "rshub.intake" {
			intake = s
		}
	}
	if intake.parent() != sourceSpan {
		t.Fatalf("intake span's parent %q, want the Source's %s", intake.parent(), sourceSpan)
	}
	want := "00-" + traceID + "-" + intake.SpanID + "-01"
	if frame.TraceParent != want {
		t.Fatalf("event traceparent %q, want %q", frame.TraceParent, want)
	}
	var posted, statuses []string
	for _, s := range spans {
		switch s.OperationName {
		case "rshub.webhook.post":
			posted = append(posted, "00-"+traceID+"-"+s.SpanID+"-01")
			statuses = append(statuses, fmt.Sprint(s.tag("http.response.status_code")))
			if addr, port := fmt.Sprint(s.tag("server.address")), fmt.Sprint(s.tag("server.port")); addr != "127.0.0.1" ||
				(port != failing.srv.URL[strings.LastIndex(failing.srv.URL, ":")+1:] && port != healthy.srv.URL[strings.LastIndex(healthy.srv.URL, ":")+1:]) {
				t.Errorf("attempt span: server.address %q server.port %q, want the callback's host alone and its port", addr, port)
			}
			fallthrough
		case "rshub.live.send", "rshub.validate", "rshub.commit":
			if s.parent() != intake.SpanID || s.TraceID != traceID {
				t.Errorf("%s span %s: parent %q, want the intake span %s", s.OperationName, s.SpanID, s.parent(), intake.SpanID)
			}
		}
	}
	sent := append(failing.traceparents(), healthy.traceparents()...)
	slices.Sort(sent)
	slices.Sort(posted)
	slices.Sort(statuses)
	if !slices.Equal(sent, posted) || !slices.Equal(statuses, []string{"200", "200", "500"}) {
		t.Fatalf("POSTs carried %v; the attempt spans are %v with statuses %v", sent, posted, statuses)
	}
}

// openEvents opens /events on the demo channel, waits for the live event
// and returns a reader of the next notification.
func openEvents(t *testing.T, hubURL string) func() wire.Notification {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(hubURL, "/")+wire.PathEvents+"?"+wire.ParamChannels+"=demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	r := wire.NewEventReader(resp.Body)
	next := func(want string) wire.Event {
		t.Helper()
		for {
			ev, err := r.Next()
			if err != nil {
				t.Fatalf("events: %v", err)
			}
			if ev.Type == want {
				return ev
			}
		}
	}
	next(wire.EventLive)
	return func() wire.Notification {
		t.Helper()
		var n wire.Notification
		if err := json.Unmarshal([]byte(next(wire.EventNotification).Data), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
