package hub_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// ownDeps replaces the fixture's log and store with ones on connections of
// their own, which the test closes to make the log or the store unreachable.
func ownDeps(t *testing.T) (opt fixtureOpt, logConn, storeConn *nats.Conn) {
	t.Helper()
	srv, _ := testenv.NATS(t)
	ctx := context.Background()
	var err error
	if logConn, err = srv.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(logConn.Close)
	if storeConn, err = srv.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(storeConn.Close)
	lg, err := jslog.Open(ctx, logConn, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lg.Close() })
	st, err := kvstore.Open(ctx, storeConn, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *hub.Config) { c.Log, c.Store = lg, st }, logConn, storeConn
}

// A publish the hub cannot store because the log or the store does not
// answer is a 503 with Retry-After and the reason; it is not a conflict (409)
// and not a 500.
func TestPublish_UnreachableLogOrStoreIs503WithRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		down   string // "log" or "store"
		thin   bool
		reason string
	}{
		{"FatPingLogDown", "log", false, "the log did not answer"},
		{"FatPingStoreDown", "store", false, "the state store did not answer"},
		{"ThinPingLogDown", "log", true, "the log did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt, logConn, storeConn := ownDeps(t)
			f := newFixture(t, opt)
			topicSrv := growingChangeList(t)
			ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
			thin := f.Channel(hub.Channel{Topic: topicSrv, Trust: hub.TrustOpen})
			if tc.down == "log" {
				// the channels are known and their states loaded before the log goes
				if s, r := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); s != 200 {
					t.Fatalf("setup: %d %q", s, r)
				}
				if s, r := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {thin.Topic}}); s != 200 {
					t.Fatalf("setup: %d %q", s, r)
				}
				logConn.Close()
			} else {
				storeConn.Close()
			}
			var req *http.Request
			if tc.thin {
				req, _ = http.NewRequest(http.MethodPost, f.URL, strings.NewReader(url.Values{"hub.mode": {"publish"}, "hub.url": {thin.Topic}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			} else {
				req, _ = http.NewRequest(http.MethodPost, f.URL, strings.NewReader(hubtest.Notif("change-notification", t1, t2)))
				req.Header.Set("Content-Type", "application/xml")
				for _, l := range hubtest.Links(ch.Topic, f.URL) {
					req.Header.Add("Link", l)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body := string(b)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || !strings.Contains(body, tc.reason) || !strings.Contains(body, "retry") {
				t.Fatalf("got %d Retry-After %q %q, want 503, Retry-After 5 and %q", resp.StatusCode, resp.Header.Get("Retry-After"), body, tc.reason)
			}
		})
	}
}

// growingChangeList serves a Change List with one more entry on every
// fetch and returns its URL.
func growingChangeList(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		var b strings.Builder
		b.WriteString(rsRoot + `<rs:md capability="changelist" from="` + t0 + `"/>`)
		for i := int64(1); i <= k; i++ {
			fmt.Fprintf(&b, `<url><loc>http://example.com/r%d</loc><rs:md change="updated" datetime="%s"/></url>`, i, rfc(hubtest.MustTime(t0).Add(time.Duration(i)*time.Minute)))
		}
		b.WriteString(`</urlset>`)
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/changelist.xml"
}
