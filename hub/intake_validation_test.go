package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

const (
	rsRoot   = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	rsEntry1 = `<url><loc>http://example.com/r1</loc><rs:md change="created" datetime="2013-01-03T00:05:00Z"/></url>`
)

// What the hub relays is what it validated: a thin ping whose topic serves
// something that claims to be a Sitemap or ResourceSync document (or XML
// with a DTD) and fails validation is refused with 502 naming the rule;
// nothing is stored, however often it is pinged.
func TestThinPing_InvalidResourceSyncRefused(t *testing.T) {
	shared := newFixture(t) // each case has its own origin and channel
	for _, tc := range []struct {
		name, ct, body string
		rule           string
	}{
		{"ChangeListWithoutFrom", "application/xml", rsRoot + `<rs:md capability="changelist"/>` + rsEntry1 + `</urlset>`, "rule root-attributes"},
		{"ChangeListServedAsTextPlain", "text/plain", rsRoot + `<rs:md capability="changelist"/>` + rsEntry1 + `</urlset>`, "rule root-attributes"},
		{"ChangeListWithoutContentType", "", rsRoot + `<rs:md capability="changelist"/>` + rsEntry1 + `</urlset>`, "rule root-attributes"},
		{"PlainSitemap", "application/xml", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://example.com/a</loc></url></urlset>`, "rule root-md"},
		{"MalformedChangeList", "application/xml", rsRoot + `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/><url>`, "rule well-formed"},
		{"RSMDInAtom", "application/atom+xml", `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="changelist"/></feed>`, "rule structure"},
		{"NotificationWithRelativeLoc", "application/xml", rsRoot + `<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z"/>` +
			`<url><loc>../../x</loc><rs:md change="created" datetime="2013-01-03T00:05:00Z"/></url></urlset>`, "rule absolute-uri"},
		{"ChangeListWithRelativeLoc", "application/xml", rsRoot + `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/>` +
			`<url><loc>/r1</loc><rs:md change="created" datetime="2013-01-03T00:05:00Z"/></url></urlset>`, "rule absolute-uri"},
		{"ResourceListWithRelativeLoc", "application/xml", rsRoot + `<rs:md capability="resourcelist" at="2013-01-03T00:00:00Z"/><url><loc>r1</loc></url></urlset>`, "rule absolute-uri"},
		{"DoctypeApplicationXML", "application/xml", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>`, "rule dtd"},
		{"DoctypeTextXML", "text/xml; charset=utf-8", `<!DOCTYPE x><x/>`, "rule dtd"},
		{"DoctypeBeforeChangeList", "application/xml", `<!DOCTYPE urlset>` + rsRoot + `<rs:md capability="changelist" from="2013-01-03T00:00:00Z"/></urlset>`, "rule dtd"},
		{"Latin1Notification", "application/xml; charset=ISO-8859-1", hubtest.Notif("change-notification", t0, t1), "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := shared.in(t)
			before := f.LastSeq()
			var fetches atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fetches.Add(1)
				w.Header()["Content-Type"] = []string{tc.ct}
				if tc.ct == "" {
					delete(w.Header(), "Content-Type")
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			ch := f.Channel(hub.Channel{Topic: srv.URL + "/topic", Trust: hub.TrustOpen})
			for ping := 1; ping <= 2; ping++ {
				status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
				if status != 502 || !strings.Contains(resp, tc.rule) {
					t.Fatalf("ping %d: %d %q, want 502 naming %q", ping, status, resp, tc.rule)
				}
			}
			if fetches.Load() != 2 || f.LastSeq() != before {
				t.Fatalf("%d fetches, log holds %d records (%d before); want 2 fetches and nothing stored", fetches.Load(), f.LastSeq(), before)
			}
		})
	}
}

// Content that does not claim to be ResourceSync is still relayed verbatim
// with its own Content-Type, DOCTYPE included where it is the format's own
// (HTML, XHTML); a valid ResourceSync document other than a Change List or
// a notification is relayed as it is.
func TestThinPing_ForeignContentStillRelayed(t *testing.T) {
	shared := newFixture(t) // each case has its own origin and channel
	for _, tc := range []struct{ name, ct, body string }{
		{"HTMLWithDoctype", "text/html; charset=utf-8", `<!DOCTYPE html><html><body>see http://www.sitemaps.org/schemas/sitemap/0.9</body></html>`},
		{"XHTMLWithDoctype", "application/xhtml+xml", `<!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`},
		{"Atom", "application/atom+xml", `<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>`},
		{"GenericXML", "application/xml", `<?xml version="1.0"?><note><to>x</to></note>`},
		{"JSON", "application/json", `{"a": 1}`},
		{"ResourceList", "application/xml", rsRoot + `<rs:md capability="resourcelist" at="2013-01-03T00:00:00Z"/><url><loc>http://example.com/r1</loc></url></urlset>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := shared.in(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ct)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			ch := f.Channel(hub.Channel{Topic: srv.URL + "/topic", Trust: hub.TrustOpen})
			if status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}); status != 200 {
				t.Fatalf("%d %q", status, resp)
			}
			rec, err := f.Log.Next(context.Background(), ch.Name, 1) // the channel's first record
			if err != nil || string(rec.Body) != tc.body || rec.ContentType != tc.ct {
				t.Fatalf("record %+v %v", rec, err)
			}
		})
	}
}

// A thin-pinged Change List whose entries come out of order (Lenient
// mode accepts that) is published in order, as valid notifications.
func TestThinPing_ChangeListEntriesPublishedInOrder(t *testing.T) {
	f := newFixture(t)
	body := rsRoot + `<rs:md capability="changelist" from="` + t0 + `"/>` +
		`<url><loc>http://example.com/b</loc><rs:md change="updated" datetime="2013-01-03T00:08:00Z"/></url>` +
		`<url><loc>http://example.com/a</loc><rs:md change="created" datetime="2013-01-03T00:05:00Z"/></url></urlset>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	ch := f.Channel(hub.Channel{Topic: srv.URL + "/changelist.xml", Trust: hub.TrustOpen})
	if status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}); status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
	rec, err := f.Log.Next(context.Background(), ch.Name, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Index(string(rec.Body), "example.com/a"), strings.Index(string(rec.Body), "example.com/b"); a < 0 || b < a ||
		!rec.Until.Equal(hubtest.MustTime("2013-01-03T00:08:00Z")) {
		t.Fatalf("notification until %v:\n%s", rec.Until, rec.Body)
	}
}

// A fat ping is validated in Strict mode: no DTD, absolute URIs, and a
// Content-Type charset of UTF-8 or none (415 otherwise, not stored with a
// wrong label).
func TestFatPing_StrictValidationAndCharset(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	relLoc := strings.Replace(hubtest.Notif("change-notification", t0, t1, "2013-01-03T00:05:00Z"), "http://example.com/res0", "../../x", 1)
	relUp := strings.Replace(hubtest.Notif("change-notification", t0, t1), "http://example.com/dataset1/capabilitylist.xml", "../capabilitylist.xml", 1)
	doctype := strings.Replace(hubtest.Notif("change-notification", t0, t1), "<urlset", "<!DOCTYPE urlset [<!ENTITY e \"x\">]>\n<urlset", 1)
	for _, tc := range []struct {
		name, ct, body string
		status         int
		want           string
	}{
		{"RelativeLoc", "application/xml", relLoc, 400, "rule absolute-uri"},
		{"RelativeUpLink", "application/xml", relUp, 400, "rule absolute-uri"},
		{"Doctype", "application/xml", doctype, 400, "rule dtd"},
		{"CharsetLatin1", "application/xml; charset=iso-8859-1", hubtest.Notif("change-notification", t0, t1), 415, `charset "iso-8859-1"`},
		{"CharsetUTF16", "text/xml; charset=UTF-16", hubtest.Notif("change-notification", t0, t1), 415, "UTF-8"},
		{"CharsetUnparsable", "application/xml; charset", hubtest.Notif("change-notification", t0, t1), 415, "Content-Type"},
		{"CharsetUpperUTF8", "application/xml; charset=UTF-8", hubtest.Notif("change-notification", t0, t1), 200, "stored seq 1"},
		{"CharsetLowerUTF8", "application/xml; charset=utf-8", hubtest.Notif("change-notification", t1, t2), 200, "stored seq 2"},
		{"NoCharset", "application/xml", hubtest.Notif("change-notification", t2, t3), 200, "stored seq 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.LastSeq()
			req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ct)
			for _, l := range hubtest.Links(ch.Topic, f.URL) {
				req.Header.Add("Link", l)
			}
			status, resp := hubtest.Do(t, req)
			if status != tc.status || !strings.Contains(resp, tc.want) {
				t.Fatalf("got %d %q, want %d mentioning %q", status, resp, tc.status, tc.want)
			}
			if stored := f.LastSeq() != before; stored != (status == 200) {
				t.Fatalf("log moved from %d to %d on a %d", before, f.LastSeq(), status)
			}
		})
	}
}
