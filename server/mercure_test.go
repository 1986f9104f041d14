package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// mercureHub is a whole hub with an open public channel and a private
// one (both hosted: they carry ResourceSync documents), an open channel
// that carries text (chat), and the tokens a test mints for its Mercure
// face.
type mercureHub struct {
	t                       *testing.T
	k                       *accesstest.Keys
	base, pub, secret, chat string // the hub's origin, the channels' topics
	aud                     string
	next                    time.Time // the next notification's from
}

func startMercureHub(t *testing.T, configure ...func(*server.Config)) *mercureHub {
	t.Helper()
	k := accesstest.NewSecret(t)
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "pub", "hosted": true, "trust": "open"}, {"name": "secret", "hosted": true, "trust": "open", "private": true}, {"name": "chat", "topic": "`+chatTopic+`", "trust": "open"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWTKey, c.PublisherJWTKey, c.MercureIssuer = chans, k.Secret, k.Secret, "https://issuer.example"
		for _, f := range configure {
			f(c)
		}
	})
	base := "http://" + st.Addr
	return &mercureHub{t: t, k: k, base: base, pub: base + wire.TopicPath("pub"), secret: base + wire.TopicPath("secret"), chat: chatTopic,
		aud: base + "/.well-known/mercure", next: time.Now().UTC().Truncate(time.Second).Add(-time.Hour)}
}

// chatTopic is the topic of the text channel of a mercureHub.
const chatTopic = "https://chat.example/room"

// token mints an access token of the current draft granting actions on
// the topics matched by matchers (match_type, match pairs).
func (h *mercureHub) token(actions []string, matchers ...string) string {
	var topics []any
	for i := 0; i+1 < len(matchers); i += 2 {
		topics = append(topics, map[string]any{"match_type": matchers[i], "match": matchers[i+1]})
	}
	return h.k.Mint(h.t, "HS256", map[string]any{"typ": "at+jwt"}, map[string]any{
		"exp": time.Now().Add(time.Hour).Unix(), "aud": h.aud, "iss": "https://issuer.example",
		"authorization_details": []any{map[string]any{"type": access.DetailType, "actions": actions, "topics": topics}},
	})
}

// notification returns the next change notification, continuing the
// last; its text holds an empty line and leading spaces.
func (h *mercureHub) notification(loc string) string {
	from, until := h.next, h.next.Add(time.Minute)
	h.next = until
	return fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">

   <rs:md capability="change-notification" from="%s" until="%s"/>
  <url><loc>%s</loc><rs:md change="updated" datetime="%s"/></url>
</urlset>`, from.Format(time.RFC3339), until.Format(time.RFC3339), loc, until.Format(time.RFC3339))
}

// publish POSTs a Mercure publish form with token; it returns the status,
// the body and the header.
func (h *mercureHub) publish(token string, form url.Values) (int, string, http.Header) {
	h.t.Helper()
	status, b, header := h.send(http.MethodPost, h.aud, token, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	return status, string(b), header
}

// send makes one request with token (none when "") and contentType (none
// when ""); it returns the status, the body and the header.
func (h *mercureHub) send(method, u, token, contentType string, body io.Reader) (int, []byte, http.Header) {
	h.t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// mustPublish publishes data to topic and returns the update's id.
func (h *mercureHub) mustPublish(token, topic, data string, extra ...string) string {
	h.t.Helper()
	form := url.Values{"topic": {topic}, "data": {data}}
	for i := 0; i+1 < len(extra); i += 2 {
		form.Set(extra[i], extra[i+1])
	}
	s, b, hdr := h.publish(token, form)
	if s != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") || b == "" {
		h.t.Fatalf("publish to %s: %d %q %s", topic, s, hdr.Get("Content-Type"), b)
	}
	return b
}

// mercureEvent is one event of a Mercure stream.
type mercureEvent struct{ id, typ, data string }

// stream is an open Mercure subscription.
type stream struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// subscribe opens a subscription with query q and headers as name, value
// pairs, and waits until it is live.
func (h *mercureHub) subscribe(q url.Values, hdr ...string) *stream {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	h.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.aud+"?"+q.Encode(), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wire.ContentTypeEventStream {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("subscribe %s: %d %s", q.Encode(), resp.StatusCode, b)
	}
	return &stream{t: h.t, resp: resp, r: bufio.NewReader(resp.Body)}
}

// next returns the next untyped or typed event, reading past comments
// (and noting whether the live comment went by).
func (s *stream) next() (mercureEvent, bool) {
	s.t.Helper()
	var e mercureEvent
	var data []string
	live := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if e.id != "" || data != nil {
				e.data = strings.Join(data, "\n")
				return e, live
			}
		case strings.HasPrefix(line, ": live"):
			live = true
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[6:])
		case line == "data:":
			data = append(data, "")
		}
	}
}

// The Mercure face publishes a change notification to a channel's topic
// as a fat ping, answers 200 text/plain with the id, and delivers it to a
// subscriber of the topic (exact and URL pattern) with that id and the
// data exactly as published; a publisher's id published again is the
// same update, stored once.
func TestMercure_PublishReachesMatchingSubscribersExactly(t *testing.T) {
	h := startMercureHub(t)
	pubTok := h.token([]string{"publish"}, "urlpattern", h.base+"/topics/:name")
	exact := h.subscribe(url.Values{"match": {h.pub}})
	pattern := h.subscribe(url.Values{"match_urlpattern": {h.base + "/topics/:name"}})
	other := h.subscribe(url.Values{"match": {h.pub + "x", h.secret}, "match_urlpattern": {h.base + "/topics/pub/:x"},
		"authorization": {h.token([]string{"subscribe"}, "exact", h.secret)}})
	body := h.notification("http://example.com/a")
	id := h.mustPublish(pubTok, h.pub, body, "id", "publisher-id-1")
	if id != "publisher-id-1" {
		t.Fatalf("publish answered %q, want the publisher's id", id)
	}
	if again := h.mustPublish(pubTok, h.pub, body, "id", "publisher-id-1"); again != id {
		t.Fatalf("the same publisher id was stored again: %s then %s", id, again)
	}
	for name, s := range map[string]*stream{"exact": exact, "urlpattern": pattern} {
		e, _ := s.next()
		if e.id != id || e.typ != "" || e.data != body {
			t.Fatalf("%s: got %+v, want id %s and the data as published", name, e, id)
		}
	}
	second := h.mustPublish(pubTok, h.pub, h.notification("http://example.com/b"))
	if e, _ := pattern.next(); e.id != second {
		t.Fatalf("the second update reached the pattern subscriber as %+v, want id %s (the duplicate was stored once)", e, second)
	}
	// the other subscriber matches neither: the first update it gets is
	// one of the topic it names
	secretID := h.mustPublish(h.token([]string{"publish"}, "exact", h.secret), h.secret, h.notification("http://example.com/c"))
	if e, _ := other.next(); e.id != secretID {
		t.Fatalf("a subscriber matching neither update got %+v first, want %s", e, secretID)
	}
}

// The hosted topic and the pull-mode documents of a channel advertise the
// Mercure face: Link <…/.well-known/mercure>; rel="mercure".
func TestMercure_DiscoveryLinkOnTopicsAndPullDocuments(t *testing.T) {
	h := startMercureHub(t)
	h.mustPublish(h.token([]string{"publish"}, "exact", h.pub), h.pub, h.notification("http://example.com/a"))
	want := "<" + h.aud + `>; rel="mercure"`
	for _, u := range []string{h.pub, h.base + wire.CapabilityListPath("pub"), h.base + wire.ChangeListPath("pub")} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if links := strings.Join(resp.Header.Values("Link"), ", "); resp.StatusCode != 200 || !strings.Contains(links, want) {
			t.Errorf("GET %s: %d, Link %q, want %s", u, resp.StatusCode, links, want)
		}
	}
}

// Last-Event-ID (header, last_event_id, lastEventID) resumes a
// subscription from the log after the event it names; earliest replays
// every update the log holds.
func TestMercure_LastEventIDResumesFromTheLog(t *testing.T) {
	h := startMercureHub(t)
	tok := h.token([]string{"publish"}, "exact", h.pub)
	var ids, bodies []string
	for i := range 3 {
		b := h.notification(fmt.Sprintf("http://example.com/%d", i))
		ids, bodies = append(ids, h.mustPublish(tok, h.pub, b)), append(bodies, b)
	}
	check := func(name string, s *stream, from int) {
		t.Helper()
		for i := from; i < 3; i++ {
			e, _ := s.next()
			if e.id != ids[i] || e.data != bodies[i] {
				t.Fatalf("%s: event %+v, want update %d (%s)", name, e, i, ids[i])
			}
		}
	}
	check("header", h.subscribe(url.Values{"match": {h.pub}}, "Last-Event-ID", ids[0]), 1)
	check("last_event_id", h.subscribe(url.Values{"match": {h.pub}, "last_event_id": {ids[1]}}), 2)
	check("lastEventID", h.subscribe(url.Values{"match": {h.pub}, "lastEventID": {ids[0]}}), 1)
	check("earliest", h.subscribe(url.Values{"match": {h.pub}, "last_event_id": {"earliest"}}), 0)
	// the header wins over the query
	check("header over query", h.subscribe(url.Values{"match": {h.pub}, "last_event_id": {"earliest"}}, "Last-Event-ID", ids[1]), 2)
}

// A private channel's update reaches only subscribers whose grant covers
// its topic: not an anonymous one, not one whose grant names another
// topic, even though their matchers select it.
func TestMercure_PrivateUpdatesOnlyToCoveringGrants(t *testing.T) {
	h := startMercureHub(t)
	pubTok := h.token([]string{"publish"}, "exact", "*")
	reader := h.token([]string{"subscribe"}, "urlpattern", h.base+"/topics/:name")
	stranger := h.token([]string{"subscribe"}, "exact", h.base+"/topics/nothing")
	q := url.Values{"match": {h.secret, h.pub}}
	anon := h.subscribe(q)
	wrong := h.subscribe(q, "Authorization", "Bearer "+stranger)
	// from the log's start: a session without a cursor starts live from when
	// it joined, which may be after the headers the subscribe waited for
	covered := h.subscribe(url.Values{"match": {h.secret, h.pub}, "authorization": {reader}, "last_event_id": {"earliest"}})

	if s, b, _ := h.publish(pubTok, url.Values{"topic": {h.pub}, "data": {h.notification("http://example.com/p0")}, "private": {"on"}}); s != 400 || !strings.Contains(b, "public") {
		t.Fatalf("private on a public channel: %d %s, want 400 naming why", s, b)
	}
	secretID := h.mustPublish(pubTok, h.secret, h.notification("http://example.com/s"), "private", "on")
	h.next = time.Now().UTC().Truncate(time.Second).Add(-30 * time.Minute) // the public channel's own times
	publicID := h.mustPublish(pubTok, h.pub, h.notification("http://example.com/p"))
	for name, s := range map[string]*stream{"anonymous": anon, "another topic's grant": wrong} {
		if e, _ := s.next(); e.id != publicID {
			t.Fatalf("%s: first event %+v, want the public update %s (the private one came before it)", name, e, publicID)
		}
	}
	if e, _ := covered.next(); e.id != secretID {
		t.Fatalf("covering grant: first event %+v, want the private update %s", e, secretID)
	}
	if e, _ := covered.next(); e.id != publicID {
		t.Fatalf("covering grant: second event %+v, want the public update %s", e, publicID)
	}
}

// Text that is no ResourceSync document is an update too on a channel
// that carries none, stored verbatim as text/plain (as a thin ping stores
// such a topic) and delivered exactly; a publisher's id is the update's id on the stream,
// and a Last-Event-ID naming it resumes after it.
func TestMercure_TextUpdatesAndPublisherIDs(t *testing.T) {
	h := startMercureHub(t)
	tok := h.token([]string{"publish"}, "exact", h.chat)
	live := h.subscribe(url.Values{"match": {h.chat}})
	texts := []string{"data for\n\n        a test", " leading space\r\nand a CRLF", "third"}
	want := []string{texts[0], " leading space\nand a CRLF", texts[2]} // a client joins lines with LF
	for i, text := range texts {
		if id := h.mustPublish(tok, h.chat, text, "id", fmt.Sprintf("text-%d", i)); id != fmt.Sprintf("text-%d", i) {
			t.Fatalf("publish %d answered %q", i, id)
		}
	}
	for i := range texts {
		if e, _ := live.next(); e.id != fmt.Sprintf("text-%d", i) || e.data != want[i] {
			t.Fatalf("event %d: %+v, want id text-%d and %q", i, e, i, want[i])
		}
	}
	resumed := h.subscribe(url.Values{"match": {h.chat}}, "Last-Event-ID", "text-0")
	for i := 1; i < len(texts); i++ {
		if e, _ := resumed.next(); e.id != fmt.Sprintf("text-%d", i) {
			t.Fatalf("resumed after text-0: event %+v, want text-%d", e, i)
		}
	}
}

// Every refusal of the Mercure face names its cause: tokens (missing,
// bad, wrong audience or issuer, without the grant), forms and queries.
func TestMercure_AuthorizationAndRequestErrors(t *testing.T) {
	h := startMercureHub(t)
	pubTok := h.token([]string{"publish"}, "exact", h.pub)
	subOnly := h.token([]string{"subscribe"}, "exact", "*")
	wrongAud := h.k.Mint(t, "HS256", map[string]any{"typ": "at+jwt"}, map[string]any{
		"exp": time.Now().Add(time.Hour).Unix(), "aud": "https://elsewhere.example/.well-known/mercure", "iss": "https://issuer.example",
		"authorization_details": []any{map[string]any{"type": access.DetailType, "actions": []string{"publish"}, "topics": []any{map[string]any{"match": "*"}}}},
	})
	wrongIss := h.k.Mint(t, "HS256", map[string]any{"typ": "at+jwt"}, map[string]any{
		"exp": time.Now().Add(time.Hour).Unix(), "aud": h.aud, "iss": "https://evil.example",
		"authorization_details": []any{map[string]any{"type": access.DetailType, "actions": []string{"publish"}, "topics": []any{map[string]any{"match": "*"}}}},
	})
	data := h.notification("http://example.com/x")
	form := func(kv ...string) url.Values {
		v := url.Values{"topic": {h.pub}, "data": {data}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for name, tc := range map[string]struct {
		token  string
		form   url.Values
		status int
		says   string
	}{
		"no token":             {"", form(), 401, "token"},
		"bad signature":        {pubTok[:len(pubTok)-4] + "AAAA", form(), 401, "invalid_token"},
		"wrong audience":       {wrongAud, form(), 401, "aud"},
		"wrong issuer":         {wrongIss, form(), 401, "iss"},
		"subscribe only":       {subOnly, form(), 403, "insufficient_scope"},
		"other topic":          {pubTok, form("topic", h.secret), 403, "insufficient_scope"},
		"no channel":           {h.token([]string{"publish"}, "exact", "*"), form("topic", "urn:nothing"), 404, "channel"},
		"invalid ResourceSync": {pubTok, form("data", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url/></urlset>`), 400, "ResourceSync"},
		"empty data":           {pubTok, form("data", ""), 400, "empty"},
		"cursor-like id":       {pubTok, form("id", "42"), 400, "cursor"},
		"earliest id":          {pubTok, form("id", "earliest"), 400, "earliest"},
		"type":                 {pubTok, form("type", "custom"), 400, "type"},
		"retry":                {pubTok, form("retry", "10"), 400, "retry"},
		"two topics":           {pubTok, url.Values{"topic": {h.pub, h.secret}, "data": {data}}, 400, "one topic"},
		"id with a newline":    {pubTok, form("id", "a\nb"), 400, "id"},
	} {
		s, b, hdr := h.publish(tc.token, tc.form)
		if s != tc.status || !strings.Contains(b+hdr.Get("WWW-Authenticate"), tc.says) {
			t.Errorf("%s: %d %q (%s), want %d naming %q", name, s, strings.TrimSpace(b), hdr.Get("WWW-Authenticate"), tc.status, tc.says)
		}
	}
	for name, tc := range map[string]struct {
		query  string
		hdr    []string
		status int
		says   string
	}{
		"no matcher":          {"", nil, 400, "match"},
		"unknown matcher":     {"match_regex=x", nil, 400, "match_regex"},
		"reserved namespace":  {"Matching=x", nil, 400, "Matching"},
		"bad pattern":         {"match_urlpattern=" + url.QueryEscape("https://e/(\\d+)"), nil, 400, "groups"},
		"control character":   {"match=a%01b", nil, 400, "control"},
		"last_event_id twice": {"match=x&last_event_id=a&last_event_id=b", nil, 400, "last_event_id"},
		"bad token":           {"match=x&authorization=x.y.z", nil, 401, "invalid_token"},
		"publish-only aud ok": {"match=x", []string{"Authorization", "Bearer " + wrongAud}, 401, "aud"},
	} {
		req, _ := http.NewRequest(http.MethodGet, h.aud+"?"+tc.query, nil)
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			req.Header.Set(tc.hdr[i], tc.hdr[i+1])
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req) // a stream opened by mistake fails, not hangs
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b)+resp.Header.Get("WWW-Authenticate"), tc.says) {
			t.Errorf("subscribe, %s: %d %q, want %d naming %q", name, resp.StatusCode, strings.TrimSpace(string(b)), tc.status, tc.says)
		}
	}
}
