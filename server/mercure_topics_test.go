package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/wire"
)

// A Mercure topic that is no URL (a raw string) is a channel's with
// --open-topics: the channel's topic is the hub's URL for it, and a
// subscriber selects it by either spelling. Topics the draft forbids are
// refused with 400 naming why.
func TestMercure_TopicsThatAreNoURL(t *testing.T) {
	h := startMercureHub(t, func(c *server.Config) { c.OpenTopics = true })
	raw := "orders/42 ü"
	asURL := wire.MercureTopicURL(h.base, raw)
	tok := h.token([]string{"publish"}, "exact", raw)
	byRaw := h.subscribe(url.Values{"match": {"foo", raw}})
	byURL := h.subscribe(url.Values{"match": {asURL}})
	id := h.mustPublish(tok, raw, "text for a raw topic", "id", "raw-1")
	for name, s := range map[string]*stream{"raw": byRaw, "URL": byURL} {
		if e, _ := s.next(); e.id != id || e.data != "text for a raw topic" {
			t.Fatalf("matched by its %s spelling: %+v, want %s", name, e, id)
		}
	}
	if id := h.mustPublish(tok, asURL, "by its URL", "id", "raw-2"); id != "raw-2" { // a grant of the raw string covers its URL
		t.Fatalf("publish to the URL spelling answered %q", id)
	}
	if e, _ := byRaw.next(); e.id != "raw-2" {
		t.Fatalf("the update published to the URL spelling reached the raw matcher as %+v", e)
	}
	if s, b, _ := h.publish(h.token([]string{"publish"}, "exact", "other"), url.Values{"topic": {raw}, "data": {"x"}}); s != 403 {
		t.Fatalf("a grant of another topic published to %q: %d %s", raw, s, b)
	}
	all := h.token([]string{"publish"}, "exact", "*")
	for name, tc := range map[string]struct{ topic, says string }{
		"control character": {"a\x01b", "control"},
		"format character":  {"a\u200bb", "format"},
		"too long":          {strings.Repeat("x", wire.MaxMercureTopic+1), "longer"},
	} {
		if s, b, _ := h.publish(all, url.Values{"topic": {tc.topic}, "data": {"x"}}); s != 400 || !strings.Contains(b, tc.says) {
			t.Errorf("%s: %d %s, want 400 naming %q", name, s, b, tc.says)
		}
	}
}

// A channel that carries ResourceSync documents (hosted: the hub serves
// its Change List; or one whose history holds a change notification)
// refuses text that is none, naming what it takes; a channel that never
// carried one takes text.
func TestMercure_TextRefusedOnChannelsThatCarryResourceSync(t *testing.T) {
	h := startMercureHub(t)
	all := h.token([]string{"publish"}, "exact", "*")
	if s, b, _ := h.publish(all, url.Values{"topic": {h.pub}, "data": {"hello"}}); s != 400 || !strings.Contains(b, "change notification") || !strings.Contains(b, "Change List") {
		t.Fatalf("text to a hosted channel: %d %s, want 400 naming what it takes", s, b)
	}
	h.mustPublish(all, h.chat, "text first")
	h.mustPublish(all, h.chat, h.notification("http://example.com/a"))
	if s, b, _ := h.publish(all, url.Values{"topic": {h.chat}, "data": {"text after"}}); s != 400 || !strings.Contains(b, "history") {
		t.Fatalf("text to a channel whose history holds a change notification: %d %s, want 400", s, b)
	}
}

// A subscriber without a cursor receives an update published as soon as
// its stream's headers arrive (the suite and clients publish at onopen):
// the stream takes its log position before they are sent. The live
// comment says where the stream joined; one at or past the update before
// the update is the update missed.
func TestMercure_NoCursorSubscriberReceivesWhatIsPublishedAtOpen(t *testing.T) {
	h := startMercureHub(t)
	tok := h.token([]string{"publish"}, "exact", h.chat)
	for i := range 20 {
		s := h.subscribe(url.Values{"match": {h.chat}})
		status, body, hdr := h.publish(tok, url.Values{"topic": {h.chat}, "data": {"round " + strconv.Itoa(i)}})
		if status != 200 {
			t.Fatalf("round %d: publish %d %s", i, status, body)
		}
		seq, _ := strconv.ParseUint(hdr.Get(wire.HeaderSeq), 10, 64)
		for got := false; !got; {
			line, err := s.r.ReadString('\n')
			if err != nil {
				t.Fatalf("round %d: stream ended: %v", i, err)
			}
			line = strings.TrimSpace(line)
			if c, err := wire.ParseCursor(strings.TrimPrefix(line, ": live ")); strings.HasPrefix(line, ": live ") && err == nil && c.Seq >= seq {
				t.Fatalf("round %d: the stream joined live at %d without update %d, published once its headers arrived", i, c.Seq, seq)
			}
			got = line == "id: "+body
		}
		s.resp.Body.Close()
	}
}

// A thin ping (hub.mode=publish) to the hub's URL for a Mercure topic that
// is no URL is refused with 400 topic saying to publish through Mercure:
// the hub would fetch its own URL, which serves no document.
func TestMercure_ThinPingToARawTopicsURLIsRefused(t *testing.T) {
	h := startMercureHub(t, func(c *server.Config) { c.OpenTopics = true })
	asURL := wire.MercureTopicURL(h.base, "orders")
	h.mustPublish(h.token([]string{"publish"}, "exact", "orders"), "orders", "a text update")
	for _, topic := range []string{asURL, wire.MercureTopicURL(h.base, "never-published")} {
		form := url.Values{"hub.mode": {"publish"}, "hub.url": {topic}}
		resp, err := http.PostForm(h.base+"/", form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "Mercure topic") || !strings.Contains(string(b), "publish it through Mercure") {
			t.Errorf("thin ping to %s: %d %s, want 400 saying to publish through Mercure", topic, resp.StatusCode, b)
		}
	}
}
