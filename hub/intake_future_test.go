package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// rfc formats a time as the notifications of these tests do.
func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Rule future: a notification whose from, until or datetime lies further in
// the future than the clock skew limit is refused with 400 naming the field
// and the limit, and nothing is stored.
func TestFatPing_FutureTimesRefused(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	past := now.Add(-time.Hour)
	cases := []struct {
		name   string
		skew   time.Duration // Config.MaxClockSkew; 0 = the default
		body   string
		status int
		want   []string // in the answer
	}{
		{"UntilYear9999", 0, hubtest.Notif("change-notification", rfc(past), "9999-12-31T23:59:59Z"), 400,
			[]string{"rule future", "root rs:md until 9999-12-31T23:59:59Z", "5m0s"}},
		{"FromAndUntilAhead", 0, hubtest.Notif("change-notification", rfc(now.Add(time.Hour)), rfc(now.Add(2*time.Hour))), 400,
			[]string{"root rs:md from", "5m0s"}},
		{"EntryDatetimeAhead", 0, hubtest.Notif("change-notification", rfc(past), rfc(now.Add(time.Minute)), rfc(now.Add(time.Minute))), 200, nil},
		{"EntryDatetimeBeyondSkew", 10 * time.Second, hubtest.Notif("change-notification", rfc(past), rfc(now.Add(time.Minute)), rfc(now.Add(time.Minute))), 400,
			[]string{"root rs:md until", "10s"}},
		{"UntilWithinDefaultSkew", 0, hubtest.Notif("change-notification", rfc(past), rfc(now.Add(4*time.Minute))), 200, nil},
		{"UntilBeyondDefaultSkew", 0, hubtest.Notif("change-notification", rfc(past), rfc(now.Add(6*time.Minute))), 400,
			[]string{"root rs:md until", "5m0s"}},
		{"LargerSkewConfigured", time.Hour, hubtest.Notif("change-notification", rfc(past), rfc(now.Add(30*time.Minute))), 200, nil},
	}
	// one hub per skew; each case publishes to a channel of its own
	hubs := map[time.Duration]*fixture{}
	for _, tc := range cases {
		if hubs[tc.skew] == nil {
			hubs[tc.skew] = newFixture(t, func(c *hub.Config) { c.MaxClockSkew = tc.skew })
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := hubs[tc.skew].in(t)
			before := f.LastSeq()
			ch := f.Channel(hub.Channel{Topic: openTopic + tc.name, Trust: hub.TrustOpen})
			status, resp := f.PostXML(tc.body, hubtest.Links(ch.Topic, f.URL))
			if status != tc.status {
				t.Fatalf("got %d %q, want %d", status, resp, tc.status)
			}
			for _, w := range tc.want {
				if !strings.Contains(resp, w) {
					t.Errorf("answer %q does not name %q", resp, w)
				}
			}
			if stored := f.LastSeq() != before; stored != (tc.status == 200) {
				t.Fatalf("log holds %d records after a %d, %d before", f.LastSeq(), status, before)
			}
		})
	}
}

// One bad notification cannot block a channel: the one dated 9999 is
// refused, and the correctly dated ones after it are stored.
func TestFatPing_FarFutureUntilDoesNotBlockTheChannel(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	if s, r := f.PostXML(hubtest.Notif("change-notification", t0, "9999-12-31T23:59:59Z"), hubtest.Links(ch.Topic, f.URL)); s != 400 {
		t.Fatalf("year 9999: %d %q, want 400", s, r)
	}
	for _, w := range [][2]string{{t0, t1}, {t1, t2}, {t2, t3}} {
		if s, r := f.PostXML(hubtest.Notif("change-notification", w[0], w[1]), hubtest.Links(ch.Topic, f.URL)); s != 200 {
			t.Fatalf("[%s, %s] after the refused one: %d %q", w[0], w[1], s, r)
		}
	}
	if f.LastSeq() != 3 {
		t.Fatalf("log holds %d records, want 3", f.LastSeq())
	}
}

// Rule future applies to thin-pinged Change Lists too: an entry dated
// beyond the skew limit would become a notification's until. The Source's
// document is at fault: 502, nothing stored.
func TestThinPing_FutureChangeListRefused(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	shared := newFixture(t) // each case has its own origin and channel
	for _, tc := range []struct {
		name, root, entry string
		want              string
	}{
		{"EntryDatetime", `from="` + t0 + `"`, rfc(now.Add(time.Hour)), "rs:md datetime"},
		{"EntryYear9999", `from="` + t0 + `"`, "9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"},
		{"RootUntil", `from="` + t0 + `" until="9999-01-01T00:00:00Z"`, t1, "root rs:md until"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := shared.in(t)
			before := f.LastSeq()
			body := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
				`<rs:md capability="changelist" ` + tc.root + `/>` +
				fmt.Sprintf(`<url><loc>http://example.com/r1</loc><rs:md change="created" datetime="%s"/></url></urlset>`, tc.entry)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(srv.Close)
			ch := f.Channel(hub.Channel{Topic: srv.URL + "/changelist.xml", Trust: hub.TrustOpen})
			status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
			if status != 502 || !strings.Contains(resp, "rule future") || !strings.Contains(resp, tc.want) || !strings.Contains(resp, "5m0s") {
				t.Fatalf("%d %q, want 502 naming rule future, %q and the limit", status, resp, tc.want)
			}
			if f.LastSeq() != before {
				t.Fatalf("log holds %d records, %d before", f.LastSeq(), before)
			}
			st, _ := f.Hub.ChannelState(context.Background(), ch.Topic)
			if !st.LastUntil.IsZero() {
				t.Fatalf("anchor moved to %v", st.LastUntil)
			}
		})
	}
}
