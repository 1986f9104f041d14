package hub_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

const (
	t0 = "2013-01-03T00:00:00Z"
	t1 = "2013-01-03T00:10:00Z"
	t2 = "2013-01-03T00:20:00Z"
	t3 = "2013-01-03T00:30:00Z"
)

// RSN-15, RSN-18: a valid fat ping is stored and answered 200 only once the
// log holds it.
func TestFatPing_StoredThen200(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	body := hubtest.Notif("change-notification", t0, t1, "2013-01-03T00:07:22Z")
	status, resp := f.PostXML(body, append(hubtest.Links(ch.Topic, f.URL), `<http://example.com/dataset1/capabilitylist.xml>; rel="resourcesync"`))
	if status != http.StatusOK {
		t.Fatalf("status %d %q", status, resp)
	}
	rec, err := f.Log.Next(context.Background(), ch.Name, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Body) != body || rec.ContentType != "application/xml" || rec.Topic != ch.Topic ||
		rec.From.Format("15:04") != "00:00" || rec.Until.Format("15:04") != "00:10" ||
		rec.ResourceSync != "http://example.com/dataset1/capabilitylist.xml" {
		t.Fatalf("record %+v", rec)
	}
}

// RSN-7 (1.0): the superseded changelist-notification value is accepted.
func TestFatPing_Accepts10CapabilityValue(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	if status, resp := f.PostXML(hubtest.Notif("changelist-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); status != 200 {
		t.Fatalf("status %d %q", status, resp)
	}
}

// Every bad publish gets its status and a reason, and writes nothing.
func TestFatPing_BadRequestsRefusedAndNothingWritten(t *testing.T) {
	f := newFixture(t)
	open := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	tok := f.Channel(hub.Channel{Topic: "http://127.0.0.1:1/tok/", Token: "a-token-of-16-chars-or-more"})
	good := hubtest.Notif("change-notification", t0, t1, "2013-01-03T00:05:00Z")
	// establish the channel's history so continuity rules apply
	if s, r := f.PostXML(good, hubtest.Links(open.Topic, f.URL)); s != 200 {
		t.Fatalf("setup publish: %d %q", s, r)
	}
	big := hubtest.Notif("change-notification", t1, t2, strings.Repeat("2013-01-03T00:15:00Z\x00", 1)) + strings.Repeat("<!-- padding -->", 70000)
	cases := []struct {
		name   string
		ct     string
		body   string
		links  []string
		hdr    []string
		status int
		want   string
	}{
		{"malformed XML", "application/xml", "<urlset><rs:md", hubtest.Links(open.Topic, f.URL), nil, 400, "invalid notification"},
		{"wrong capability", "application/xml", hubtest.Notif("changelist", t1, t2), hubtest.Links(open.Topic, f.URL), nil, 400, "wrong capability"},
		{"until missing", "application/xml", strings.Replace(hubtest.Notif("change-notification", t1, t2), ` until="`+t2+`"`, "", 1), hubtest.Links(open.Topic, f.URL), nil, 400, "until"},
		{"datetime outside window", "application/xml", hubtest.Notif("change-notification", t1, t2, "2013-01-03T00:25:00Z"), hubtest.Links(open.Topic, f.URL), nil, 400, "invalid notification"},
		{"no self link", "application/xml", hubtest.Notif("change-notification", t1, t2), []string{"<" + f.URL + `>; rel="hub"`}, nil, 400, `rel="self"`},
		{"two self links", "application/xml", hubtest.Notif("change-notification", t1, t2), append(hubtest.Links(open.Topic, f.URL), `<http://127.0.0.1:1/x>; rel="self"`), nil, 400, `rel="self"`},
		{"no hub link", "application/xml", hubtest.Notif("change-notification", t1, t2), []string{"<" + open.Topic + `>; rel="self"`}, nil, 400, `rel="hub"`},
		{"other hub", "application/xml", hubtest.Notif("change-notification", t1, t2), hubtest.Links(open.Topic, "http://hub.example.org/"), nil, 400, "this hub is"},
		{"unknown channel", "application/xml", hubtest.Notif("change-notification", t1, t2), hubtest.Links("http://127.0.0.1:1/nope", f.URL), nil, 404, "no channel"},
		{"over the size limit", "application/xml", big, hubtest.Links(open.Topic, f.URL), nil, 413, "limit"},
		{"wrong content type", "text/plain", hubtest.Notif("change-notification", t1, t2), hubtest.Links(open.Topic, f.URL), nil, 415, "Content-Type"},
		{"no token", "application/xml", hubtest.Notif("change-notification", t0, t1), hubtest.Links(tok.Topic, f.URL), nil, 401, "Bearer"},
		{"wrong token", "application/xml", hubtest.Notif("change-notification", t0, t1), hubtest.Links(tok.Topic, f.URL), []string{"Authorization", "Bearer nope"}, 403, "token"},
		{"overlap", "application/xml", hubtest.Notif("change-notification", "2013-01-03T00:05:00Z", t2), hubtest.Links(open.Topic, f.URL), nil, 409, "overlap"},
		{"out of order", "application/xml", hubtest.Notif("change-notification", "2013-01-02T00:00:00Z", t0), hubtest.Links(open.Topic, f.URL), nil, 409, "out-of-order"},
	}
	before := f.LastSeq()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ct)
			for _, l := range tc.links {
				req.Header.Add("Link", l)
			}
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			status, body := hubtest.Do(t, req)
			if status != tc.status || !strings.Contains(strings.ToLower(body), strings.ToLower(tc.want)) {
				t.Fatalf("got %d %q, want %d mentioning %q", status, body, tc.status, tc.want)
			}
			if got := f.LastSeq(); got != before {
				t.Fatalf("log moved from %d to %d on a refused publish", before, got)
			}
		})
	}
}

// A Source retrying a publish (its 200 got lost) does not store it twice.
func TestFatPing_RetryIsIdempotent(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	body := hubtest.Notif("change-notification", t0, t1)
	for i := 0; i < 3; i++ {
		if status, resp := f.PostXML(body, hubtest.Links(ch.Topic, f.URL)); status != 200 {
			t.Fatalf("attempt %d: %d %q", i, status, resp)
		}
	}
	if got := f.LastSeq(); got != 1 {
		t.Fatalf("log holds %d records after 3 identical publishes, want 1", got)
	}
}

// RSN-9: a notification whose from is after the last until is stored and
// the gap recorded and visible.
func TestFatPing_GapRecorded(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	status, resp := f.PostXML(hubtest.Notif("change-notification", t2, t3), hubtest.Links(ch.Topic, f.URL))
	if status != 200 || !strings.Contains(resp, "gap") {
		t.Fatalf("%d %q", status, resp)
	}
	st, err := f.Hub.ChannelState(context.Background(), ch.Topic)
	if err != nil || len(st.Gaps) != 1 || st.Gaps[0].From.Format("15:04") != "00:10" || st.Gaps[0].Until.Format("15:04") != "00:20" {
		t.Fatalf("state %+v %v", st, err)
	}
	// and contiguous ones record none
	f.PostXML(hubtest.Notif("change-notification", t3, "2013-01-03T00:40:00Z"), hubtest.Links(ch.Topic, f.URL))
	st, _ = f.Hub.ChannelState(context.Background(), ch.Topic)
	if len(st.Gaps) != 1 || st.Published != 3 {
		t.Fatalf("state %+v", st)
	}
}

// AllowOverlap accepts what would otherwise be refused with 409.
func TestFatPing_AllowOverlapConfigured(t *testing.T) {
	f := newFixture(t, func(c *hub.Config) { c.AllowOverlap = true })
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	f.PostXML(hubtest.Notif("change-notification", t0, t2), hubtest.Links(ch.Topic, f.URL))
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t1, t3), hubtest.Links(ch.Topic, f.URL)); status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
}

// Publisher trust "verified": the topic's own Link headers must name this hub.
func TestFatPing_VerifiedTopicTrust(t *testing.T) {
	f := newFixture(t)
	var advertise atomic.Bool
	var topicURL string
	topicSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if advertise.Load() {
			w.Header().Add("Link", "<"+topicURL+`>; rel="self"`)
			w.Header().Add("Link", "<"+f.URL+`>; rel="hub"`)
		}
		w.Header().Set("Content-Type", "application/xml")
	}))
	t.Cleanup(topicSrv.Close)
	topicURL = topicSrv.URL + "/change/"
	ch := f.Channel(hub.Channel{Topic: topicURL, Trust: hub.TrustVerifiedTopic})
	status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	if status != 403 || !strings.Contains(resp, "rel=\"hub\"") {
		t.Fatalf("unadvertised topic: %d %q", status, resp)
	}
	advertise.Store(true)
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); status != 200 {
		t.Fatalf("advertised topic: %d %q", status, resp)
	}
}

// Publisher trust "token": the right bearer token is accepted.
func TestFatPing_TokenTrust(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Token: "a-token-of-16-chars-or-more"})
	status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL), "Authorization", "Bearer a-token-of-16-chars-or-more")
	if status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
}

// RSN-14: a hosted topic answers HEAD and GET with Link self + hub; GET
// serves the latest notification (200, application/xml), and while the
// channel has none both answer 204 No Content with the same Link header
// (never an empty application/xml document).
func TestHostedTopic_HeadAndGet(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Name: "demo", Hosted: true, Trust: hub.TrustOpen})
	if ch.Topic != f.Server.URL+"/topics/demo" {
		t.Fatalf("hosted topic %q", ch.Topic)
	}
	check := func(status int, ctype string, body string) {
		t.Helper()
		for _, m := range []string{http.MethodHead, http.MethodGet} {
			req, _ := http.NewRequest(m, ch.Topic, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ls := wire.ParseLinks(resp.Header.Values("Link"))
			if resp.StatusCode != status || resp.Header.Get("Content-Type") != ctype ||
				len(wire.LinksRel(ls, "self")) != 1 || wire.FirstLink(ls, "self") != ch.Topic || wire.FirstLink(ls, "hub") != f.URL {
				t.Fatalf("%s: %d %v, want %d %q", m, resp.StatusCode, resp.Header, status, ctype)
			}
			if m == http.MethodGet && string(b) != body {
				t.Fatalf("GET topic = %q, want %q", b, body)
			}
		}
	}
	check(http.StatusNoContent, "", "")
	body := hubtest.Notif("change-notification", t0, t1)
	f.PostXML(body, hubtest.Links(ch.Topic, f.URL))
	check(http.StatusOK, "application/xml", body)
}

// websub.rocks 105/106: a thin ping on a non-ResourceSync topic distributes
// the body verbatim with its own Content-Type; unchanged content is not sent
// again.
func TestThinPing_VerbatimWithContentType(t *testing.T) {
	for _, ct := range []string{"text/plain", "application/json"} {
		t.Run(ct, func(t *testing.T) {
			f := newFixture(t, func(c *hub.Config) { c.OpenTopics = true })
			var fetches atomic.Int64
			content := "hello " + ct
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fetches.Add(1)
				if r.Header.Get("If-None-Match") == `"v1"` {
					w.WriteHeader(http.StatusNotModified)
					return
				}
				w.Header().Set("ETag", `"v1"`)
				w.Header().Set("Content-Type", ct)
				_, _ = w.Write([]byte(content))
			}))
			t.Cleanup(srv.Close)
			topic := srv.URL + "/topic"
			for _, key := range []string{"hub.topic", "hub.url"} {
				status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, key: {topic}})
				if status != 200 {
					t.Fatalf("%s: %d %q", key, status, resp)
				}
			}
			ch, _ := f.Store.Channel(context.Background(), topic)
			rec, err := f.Log.Next(context.Background(), ch.Name, 1)
			if err != nil || string(rec.Body) != content || rec.ContentType != ct {
				t.Fatalf("record %+v, %v", rec, err)
			}
			if f.LastSeq() != 1 || fetches.Load() != 2 {
				t.Fatalf("log %d records after an unchanged second ping (fetches %d), want 1", f.LastSeq(), fetches.Load())
			}
		})
	}
}

// changeListSource serves a Source's Change List whose entries r0, r1, …
// were created at the datetimes entries holds ([]string, changed by the
// test between pings).
func changeListSource(t *testing.T, entries *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
			`<rs:ln rel="up" href="http://example.com/capabilitylist.xml"/><rs:md capability="changelist" from="` + t0 + `"/>`)
		for i, dt := range entries.Load().([]string) {
			fmt.Fprintf(&b, `<url><loc>http://example.com/r%d</loc><lastmod>%s</lastmod><rs:md change="created" datetime="%s"/></url>`, i, dt, dt)
		}
		b.WriteString(`</urlset>`)
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A thin ping on a topic serving a ResourceSync Change List publishes the
// entries the hub has not seen as change notifications, from = previous until.
func TestThinPing_ChangeListBecomesNotifications(t *testing.T) {
	f := newFixture(t)
	var entries atomic.Value
	entries.Store([]string{"2013-01-03T00:05:00Z", "2013-01-03T00:08:00Z"})
	srv := changeListSource(t, &entries)
	ch := f.Channel(hub.Channel{Topic: srv.URL + "/changelist.xml", Trust: hub.TrustOpen})
	ping := url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}
	if status, resp := f.PostForm(ping); status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
	entries.Store([]string{"2013-01-03T00:05:00Z", "2013-01-03T00:08:00Z", "2013-01-03T00:12:00Z"})
	if status, resp := f.PostForm(ping); status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
	if status, _ := f.PostForm(ping); status != 200 { // nothing new: nothing stored
		t.Fatal(status)
	}
	r1, err1 := f.Log.Next(context.Background(), ch.Name, 1)
	r2, err2 := f.Log.Next(context.Background(), ch.Name, r1.Seq+1)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !r1.From.Equal(hubtest.MustTime(t0)) || !r1.Until.Equal(hubtest.MustTime("2013-01-03T00:08:00Z")) ||
		!r2.From.Equal(r1.Until) || !r2.Until.Equal(hubtest.MustTime("2013-01-03T00:12:00Z")) || f.LastSeq() != 2 {
		t.Fatalf("notifications [%v %v] [%v %v], log last %d", r1.From, r1.Until, r2.From, r2.Until, f.LastSeq())
	}
	if strings.Count(string(r2.Body), "<url>") != 1 || !strings.Contains(string(r2.Body), `capability="change-notification"`) {
		t.Fatalf("second notification:\n%s", r2.Body)
	}
}

// A change the Source lists at the very instant the channel's last
// notification ended (its anchor), after the ping that published the
// others of that instant, is published; one already published is not
// (entries are told apart by identity, not by datetime: by datetime alone
// the new one counted as published and was lost).
func TestThinPing_NewChangeAtTheAnchorsInstantIsPublished(t *testing.T) {
	f := newFixture(t)
	var entries atomic.Value
	entries.Store([]string{"2013-01-03T00:05:00Z", "2013-01-03T00:08:00Z"})
	srv := changeListSource(t, &entries)
	ch := f.Channel(hub.Channel{Topic: srv.URL + "/changelist.xml", Trust: hub.TrustOpen})
	ping := url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}
	if status, resp := f.PostForm(ping); status != 200 {
		t.Fatalf("%d %q", status, resp)
	}
	// r2 changed at the anchor's instant, 00:08, after the first ping
	entries.Store([]string{"2013-01-03T00:05:00Z", "2013-01-03T00:08:00Z", "2013-01-03T00:08:00Z"})
	for range 2 { // the second ping has nothing new
		if status, resp := f.PostForm(ping); status != 200 {
			t.Fatalf("%d %q", status, resp)
		}
	}
	if f.LastSeq() != 2 {
		t.Fatalf("log holds %d notifications, want 2: the first ping's and r2's", f.LastSeq())
	}
	r1, err1 := f.Log.Next(context.Background(), ch.Name, 1)
	r2, err2 := f.Log.Next(context.Background(), ch.Name, r1.Seq+1)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	body := string(r2.Body)
	if strings.Count(body, "<url>") != 1 || !strings.Contains(body, "http://example.com/r2") || !r2.From.Equal(r1.Until) || !r2.Until.Equal(r1.Until) {
		t.Fatalf("second notification [%v %v] after [%v %v]:\n%s", r2.From, r2.Until, r1.From, r1.Until, body)
	}
}

// A thin ping with neither hub.url nor hub.topic is refused.
func TestThinPing_NeedsTopic(t *testing.T) {
	f := newFixture(t)
	if status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}}); status != 400 || !strings.Contains(resp, "hub.url") {
		t.Fatalf("%d %q", status, resp)
	}
}

// Two hub processes sharing one log and store keep a channel's history
// serial: a hub whose working state is behind catches up from the log when
// its conditional append conflicts, then applies the continuity rule.
func TestFatPing_TwoHubsShareOneHistory(t *testing.T) {
	a := newFixture(t)
	ch := a.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	mux := http.NewServeMux()
	srvB := httptest.NewServer(hubtest.LoadContract(t).Validating(t, mux))
	t.Cleanup(srvB.Close)
	b, err := hub.New(hub.Config{HubURL: a.URL, Store: a.Store, Log: a.Log, Client: http.DefaultClient, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	b.Register(mux)
	postB := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srvB.URL+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", wire.NotificationLinks(ch.Topic, a.URL, ""))
		return hubtest.Do(t, req)
	}
	if s, r := a.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, a.URL)); s != 200 {
		t.Fatalf("A: %d %q", s, r)
	}
	if s, r := postB(hubtest.Notif("change-notification", t1, t2)); s != 200 {
		t.Fatalf("B: %d %q", s, r)
	}
	// A still believes the last until is t1: its append conflicts, it catches up
	if s, r := a.PostXML(hubtest.Notif("change-notification", t1, t3), hubtest.Links(ch.Topic, a.URL)); s != 409 {
		t.Fatalf("A overlapping B's notification: %d %q, want 409", s, r)
	}
	if s, r := a.PostXML(hubtest.Notif("change-notification", t2, t3), hubtest.Links(ch.Topic, a.URL)); s != 200 {
		t.Fatalf("A after catching up: %d %q", s, r)
	}
	if a.LastSeq() != 3 {
		t.Fatalf("log holds %d records, want 3", a.LastSeq())
	}
}

// RSN-13 / core §7: a Change List over 50,000 entries is not a valid
// ResourceSync document; a thin ping on it is refused with the reason and
// nothing is distributed (it is not passed on as foreign content).
func TestThinPing_OversizedChangeListRefused(t *testing.T) {
	f := newFixture(t, func(c *hub.Config) { c.MaxBody = 20 << 20 })
	const n = 50001
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>`)
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		dt := base.Add(time.Duration(i+1) * time.Second).Format(time.RFC3339)
		fmt.Fprintf(&b, `<url><loc>http://example.com/r%d</loc><lastmod>%s</lastmod><rs:md change="updated" datetime="%s"/></url>`, i, dt, dt)
	}
	b.WriteString(`</urlset>`)
	body := b.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	ch := f.Channel(hub.Channel{Topic: srv.URL + "/changelist.xml", Trust: hub.TrustOpen})
	status, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}})
	if status != 502 || !strings.Contains(resp, "invalid ResourceSync document") || !strings.Contains(resp, "50000") {
		t.Fatalf("%d %q, want 502 naming the entry limit", status, resp)
	}
	if f.LastSeq() != 0 {
		t.Fatalf("log holds %d records after a refused ping", f.LastSeq())
	}
}
