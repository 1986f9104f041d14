package hostile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// sizes are the lengths tried for every client-named string: around the
// old fatal 2,900-byte KV key, around the documented limit, and far past it.
var sizes = []int{1, 1 << 10, 2900, 3000, 4 << 10, hub.MaxTopicLen - 1, hub.MaxTopicLen, hub.MaxTopicLen + 1, 16 << 10, 60 << 10}

// oddTails are appended to generated URIs: bytes and spellings that are
// special to NATS subjects, KV keys, Redis or paths.
var oddTails = []string{"", "%00", "a b", "a.b.c", "*", ">", "%2F..%2F..", "é", "%FF%FE", "\t", "$JS.API", "a%0d%0aX-Injected:%201"}

// uriOf returns an http URI of exactly n bytes (at least the prefix) on a
// loopback port nothing listens on, ending in tail.
func uriOf(n int, tail string) string {
	prefix := "http://127.0.0.1:9/t/"
	pad := n - len(prefix) - len(tail)
	if pad < 0 {
		pad = 0
	}
	return prefix + strings.Repeat("a", pad) + tail
}

func TestHostile_EveryEndpointSurvivesHostileInput(t *testing.T) {
	tg := startTarget(t)
	tg.publishValid("start")

	t.Run("keys", func(t *testing.T) { hostileKeys(tg) })
	tg.publishValid("hostile keys")
	t.Run("documents", func(t *testing.T) { hostileDocuments(tg) })
	tg.publishValid("mutated documents")
	t.Run("dates", func(t *testing.T) { hostileDates(tg) })
	tg.publishValid("dates at the edges")
	t.Run("bodies", func(t *testing.T) { hostileBodies(tg) })
	tg.publishValid("hostile bodies")

	tg.verifyLog()
	for class, n := range tg.cases {
		t.Logf("class %-10s %5d hostile cases, %v", class, n, tg.took[class].Round(time.Millisecond))
	}
}

// hostileKeys sends long and odd topics, callbacks, names and IDs to every
// endpoint that takes one.
func hostileKeys(tg *target) {
	limited := func(n int) []int {
		if n > hub.MaxTopicLen {
			return []int{http.StatusBadRequest}
		}
		return nil
	}
	for _, n := range sizes {
		for _, tail := range oddTails {
			u := uriOf(n, tail)
			name := fmt.Sprintf("%d%q", n, tail)
			tooLong := limited(len(u))
			// fat ping: unknown topics are 404 (a topic a thin ping made an
			// open channel for takes it); past the limit 400
			want := []int{http.StatusNotFound, http.StatusBadRequest, http.StatusOK}
			if t := limited(len(strings.TrimSpace(u))); t != nil { // a Link's URI is trimmed
				want = t
			}
			body := tg.next(time.Time{})
			tg.checkPublish("keys", "fat-self/"+name, tg.fat(u, body), body, want...)

			// thin ping, both spellings: an open channel is made (until the
			// bound, then 503), the fetch fails (502); past the limit 400
			want = []int{http.StatusBadRequest, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusNotFound}
			if tooLong != nil {
				want = tooLong
			}
			tg.check("keys", "thin-url/"+name, tg.form("hub.mode", "publish", "hub.url", u), want...)
			tg.check("keys", "thin-topic/"+name, tg.form("hub.mode", "publish", "hub.topic", u), want...)

			// subscribe with the URI as topic, and as callback
			want = []int{http.StatusAccepted, http.StatusBadRequest}
			if tooLong != nil {
				want = tooLong
			}
			tg.check("keys", "sub-topic/"+name, tg.form("hub.mode", "subscribe", "hub.topic", u, "hub.callback", tg.callback), want...)
			tg.check("keys", "sub-callback/"+name, tg.form("hub.mode", "subscribe", "hub.topic", tg.topic, "hub.callback", u), want...)

			// the admin API's topic filter: a topic that is not a URL
			// (not UTF-8, a control character, a stray %) is 400
			want = []int{http.StatusOK, http.StatusBadRequest}
			if tooLong != nil {
				want = tooLong
			}
			a := tg.check("keys", "admin-topic/"+name, tg.admin(http.MethodGet, "/admin/subscriptions?topic="+queryEscape(u)), want...)
			if a.status == http.StatusOK && strings.TrimSpace(a.body) == "null" {
				tg.t.Errorf("admin list answered null, want []")
			}
		}
	}
	// names and IDs in paths: never a 5xx, never a key the store chokes on
	ids := []string{"%00", "..", "%2e%2e", "a.b", "*", "%3E", "%FF", "%20", "$JS", "x%0Ay"}
	for _, n := range []int{1, 64, 65, 128, 129, 1 << 10, 8 << 10, 32 << 10} {
		ids = append(ids, strings.Repeat("z", n))
	}
	if len(ids) > 0 {
		ids = append(ids, strings.Repeat("%00", 300))
	}
	for _, id := range ids {
		name := fmt.Sprintf("%.40s(%d)", id, len(id))
		notFound := []int{http.StatusNotFound, http.StatusBadRequest}
		if strings.Contains(id, "..") || strings.Contains(strings.ToLower(id), "%2e%2e") {
			// the router cleans dot segments with a redirect
			notFound = append(notFound, http.StatusMovedPermanently, http.StatusTemporaryRedirect)
		}
		wsWant := []int{http.StatusBadRequest, http.StatusNotFound}
		if id == "*" || hub.ValidChannelName(id) {
			wsWant = append(wsWant, http.StatusSwitchingProtocols) // a channel that may exist later
		}
		tg.check("keys", "admin-sub/"+name, tg.admin(http.MethodGet, "/admin/subscriptions/"+id), notFound...)
		tg.check("keys", "admin-sub-delete/"+name, tg.admin(http.MethodDelete, "/admin/subscriptions/"+id), notFound...)
		tg.check("keys", "admin-dead/"+name, tg.admin(http.MethodGet, "/admin/subscriptions/"+id+"/deadletters"), notFound...)
		tg.check("keys", "admin-redrive/"+name, tg.admin(http.MethodPost, "/admin/subscriptions/"+id+"/deadletters/"+id+"/redrive"), notFound...)
		tg.check("keys", "admin-channel/"+name, tg.admin(http.MethodGet, "/admin/channels/"+id), notFound...)
		tg.check("keys", "admin-channel-delete/"+name, tg.admin(http.MethodDelete, "/admin/channels/"+id), notFound...)
		tg.check("keys", "hosted/"+name, tg.request(http.MethodGet, "/topics/"+id, nil), notFound...)
		for _, doc := range []string{"capabilitylist.xml", "changelist.xml", "changelist-index.xml", "changelist-archive.xml", "changelist/" + id, "changelist-archive/" + id} {
			tg.check("keys", "pull/"+doc+"/"+name, tg.request(http.MethodGet, "/channels/"+id+"/"+doc, nil), notFound...)
		}
		tg.check("keys", "ws/"+name, tg.request(http.MethodGet, "/ws?channels="+id, nil,
			"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
			wsWant...)
	}
	// headers past the server's bound
	huge := uriOf(hub.MaxHeaderBytes+16<<10, "")
	tg.check("keys", "header-too-large", tg.fat(huge, tg.next(time.Time{})), http.StatusRequestHeaderFieldsTooLarge)
}

// hostileDocuments mutates a valid notification at random and in known
// hostile ways; each is accepted (and recorded) or refused with a 4xx.
func hostileDocuments(tg *target) {
	rng := rand.New(rand.NewPCG(11, 1))
	for i := range 300 {
		body := tg.next(time.Time{}, "http://example.org/m/1", "http://example.org/m/2")
		mutated := mutate(rng, body)
		tg.checkPublish("documents", fmt.Sprintf("random/%d", i), tg.fat(tg.topic, mutated), mutated,
			http.StatusOK, http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	base := string(tg.next(time.Time{}, "http://example.org/k/1"))
	known := []struct {
		name   string
		body   string
		header []string
		want   int
	}{
		{"doctype", `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY x "y">]>` + strings.TrimPrefix(base, `<?xml version="1.0" encoding="UTF-8"?>`), nil, http.StatusBadRequest},
		{"xxe", strings.Replace(base, "<urlset", `<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/passwd">]><urlset`, 1), nil, http.StatusBadRequest},
		{"wrong-capability", strings.Replace(base, "change-notification", "changelist", 1), nil, http.StatusBadRequest},
		{"no-from", strings.Replace(base, ` from="`, ` x-from="`, 1), nil, http.StatusBadRequest},
		{"relative-loc", strings.Replace(base, "http://example.org/k/1", "../../etc/passwd", 1), nil, http.StatusBadRequest},
		{"javascript-loc", strings.Replace(base, "http://example.org/k/1", "javascript:alert(1)", 1), nil, http.StatusBadRequest},
		{"latin1-charset", base, []string{"Content-Type", "application/xml; charset=iso-8859-1"}, http.StatusUnsupportedMediaType},
		{"not-xml", "{\"json\": true}", nil, http.StatusBadRequest},
		{"empty", "", nil, http.StatusBadRequest},
		{"deep", strings.Repeat("<a>", 100000), nil, http.StatusBadRequest},
		{"huge-attribute", strings.Replace(base, `<urlset`, `<urlset x="`+strings.Repeat("A", 4<<20)+`"`, 1), nil, http.StatusBadRequest},
	}
	for _, k := range known {
		req := tg.fat(tg.topic, []byte(k.body))
		for i := 0; i+1 < len(k.header); i += 2 {
			req.Header.Set(k.header[i], k.header[i+1])
		}
		tg.checkPublish("documents", k.name, req, []byte(k.body), k.want)
	}
}

// mutate returns a copy of b with one to four random edits.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	for range 1 + rng.IntN(4) {
		if len(out) == 0 {
			break
		}
		i := rng.IntN(len(out))
		switch rng.IntN(6) {
		case 0: // flip a byte
			out[i] ^= byte(1 + rng.IntN(255))
		case 1: // delete a span
			j := min(len(out), i+1+rng.IntN(16))
			out = append(out[:i], out[j:]...)
		case 2: // insert markup
			ins := []string{"<", ">", "&", "\"", "<!--", "]]>", "\x00", "<url>", "</urlset>", "&#0;", "&amp;"}[rng.IntN(11)]
			out = append(out[:i], append([]byte(ins), out[i:]...)...)
		case 3: // truncate
			out = out[:i]
		case 4: // duplicate a span
			j := min(len(out), i+1+rng.IntN(64))
			out = append(out[:j], append(bytes.Clone(out[i:j]), out[j:]...)...)
		case 5: // replace a digit (dates, lengths)
			if out[i] >= '0' && out[i] <= '9' {
				out[i] = byte('0' + rng.IntN(10))
			}
		}
	}
	return out
}

// hostileDates sends notifications dated at the edges: none may block the
// channel for the correctly dated ones after it.
func hostileDates(tg *target) {
	now := time.Now().UTC().Truncate(time.Second)
	cases := []struct {
		name  string
		until string
		want  []int
	}{
		{"year-9999", "9999-12-31T23:59:59Z", []int{http.StatusBadRequest}},
		{"next-year", now.AddDate(1, 0, 0).Format(time.RFC3339), []int{http.StatusBadRequest}},
		{"one-hour-ahead", now.Add(time.Hour).Format(time.RFC3339), []int{http.StatusBadRequest}},
		{"offset-hides-future", now.Add(2 * time.Hour).In(time.FixedZone("", -3*3600)).Format(time.RFC3339), []int{http.StatusBadRequest}},
		{"year-0001", "0001-01-01T00:00:00Z", []int{http.StatusBadRequest, http.StatusConflict}},
		{"leap-second", "2016-12-31T23:59:60Z", []int{http.StatusBadRequest, http.StatusConflict}},
		{"fractional", now.Add(-time.Minute).Format("2006-01-02T15:04:05.999999999Z07:00"), []int{http.StatusOK, http.StatusBadRequest, http.StatusConflict}},
		{"no-zone", "2026-01-01T00:00:00", []int{http.StatusBadRequest}},
		{"garbage", "yesterday", []int{http.StatusBadRequest}},
	}
	for _, c := range cases {
		body := tg.next(time.Time{}, "http://example.org/d/1")
		tg.mu.Lock()
		from := tg.until
		tg.mu.Unlock()
		// replace the until the builder wrote with the hostile one
		good := from.Add(time.Second).Format(time.RFC3339)
		hostile := bytes.Replace(body, []byte(`until="`+good+`"`), []byte(`until="`+c.until+`"`), 1)
		if bytes.Equal(hostile, body) {
			tg.t.Fatalf("dates/%s: until %s not found in %s", c.name, good, body)
		}
		tg.checkPublish("dates", c.name, tg.fat(tg.topic, hostile), hostile, c.want...)
		tg.publishValid("dates/" + c.name)
	}
	// an entry dated in the future inside a correct window
	body := tg.next(time.Time{}, "http://example.org/d/2")
	hostile := bytes.Replace(body, []byte(`datetime="`), []byte(`datetime="9999-01-01T00:00:00Z" x-old="`), 1)
	tg.checkPublish("dates", "entry-future", tg.fat(tg.topic, hostile), hostile, http.StatusBadRequest)
}

// hostileBodies sends bodies the hub must refuse by size or type.
func hostileBodies(tg *target) {
	big := bytes.Repeat([]byte("<!-- pad -->"), (10<<20)/12+2)
	tg.check("bodies", "over-max-body", tg.fat(tg.topic, big), http.StatusRequestEntityTooLarge)
	tg.check("bodies", "json", tg.request(http.MethodPost, "/", strings.NewReader("{}"), "Content-Type", "application/json"), http.StatusUnsupportedMediaType)
	tg.check("bodies", "no-type", tg.request(http.MethodPost, "/", strings.NewReader("x")), http.StatusUnsupportedMediaType)
	tg.check("bodies", "big-form", tg.form("hub.mode", "subscribe", "x", strings.Repeat("a", 128<<10)), http.StatusRequestEntityTooLarge)
	tg.check("bodies", "bad-mode", tg.form("hub.mode", strings.Repeat("\x00", 5000)), http.StatusBadRequest)
	body := tg.next(time.Time{})
	tg.checkPublish("bodies", "no-links", tg.request(http.MethodPost, "/", bytes.NewReader(body), "Content-Type", "application/xml"), body, http.StatusBadRequest)
	tg.checkPublish("bodies", "wrong-hub", tg.request(http.MethodPost, "/", bytes.NewReader(body), "Content-Type", "application/xml",
		"Link", "<"+tg.topic+`>; rel="self", <http://evil.example/>; rel="hub"`), body, http.StatusBadRequest)
}
