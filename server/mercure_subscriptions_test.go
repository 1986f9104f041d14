package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/server/servertest"
)

// subscriptionsView is a document of the subscription API: a collection
// or, with Subscriber set, one subscription.
type subscriptionsView struct {
	Context       string `json:"@context"`
	ID, Type      string
	LastEventID   string `json:"lastEventID"`
	Subscriber    string
	MatchType     string `json:"match_type"`
	Match         string
	Active        bool
	Subscriptions []struct {
		ID, Type, Subscriber, Match, Topic string
		MatchType                          string `json:"match_type"`
		Active                             bool
	}
}

// getSubscriptions GETs path of the subscription API with token (none
// when ""); it returns the status, the document and the header.
func (h *mercureHub) getSubscriptions(path, token string) (int, subscriptionsView, http.Header) {
	h.t.Helper()
	status, b, header := h.send(http.MethodGet, h.base+path, token, "", nil)
	var v subscriptionsView
	if status == http.StatusOK {
		if err := json.Unmarshal(b, &v); err != nil {
			h.t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return status, v, header
}

// The subscription API lists this hub's open Mercure sessions, one
// subscription per distinct matcher, each session under an identifier of
// its own; it answers only a token whose subscribe grant covers the
// requested path (relative, or absolute as a URL pattern), and forgets a
// session once it is closed.
func TestMercureSubscriptions_ListsOpenSessionsToCoveringGrants(t *testing.T) {
	h := startMercureHub(t)
	pattern := h.base + "/topics/:name"
	a := h.subscribe(url.Values{"match": {h.pub, h.pub}, "match_urlpattern": {pattern}})
	h.subscribe(url.Values{"match": {h.pub}})

	all := h.token([]string{"subscribe"}, "exact", live.PathMercureSubscriptions)
	code, v, hdr := h.getSubscriptions(live.PathMercureSubscriptions, all)
	if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("the collection: %d %s", code, hdr.Get("Content-Type"))
	}
	if v.ID != live.PathMercureSubscriptions || v.Type != "subscriptions" || v.Context == "" || len(v.Subscriptions) != 3 {
		t.Fatalf("the collection: %+v", v)
	}
	link := hdr.Get("Link")
	if !strings.Contains(link, "<"+h.aud+`>; rel="mercure"`) || !strings.Contains(link, `last-event-id="`+v.LastEventID+`"`) || v.LastEventID == "" {
		t.Errorf("Link %q, lastEventID %q", link, v.LastEventID)
	}
	subscribers := map[string]int{}
	for _, s := range v.Subscriptions {
		subscribers[s.Subscriber]++
		want := live.PathMercureSubscriptions + "/" + s.MatchType + "/" + url.PathEscape(s.Match) + "/" + url.PathEscape(s.Subscriber)
		if !s.Active || s.Type != "subscription" || s.Topic != s.Match || !strings.HasPrefix(s.Subscriber, "urn:uuid:") ||
			strings.ReplaceAll(want, ":", "%3A") != s.ID {
			t.Errorf("subscription %+v (id want %s)", s, want)
		}
	}
	if len(subscribers) != 2 {
		t.Fatalf("%d subscribers, want 2: %+v", len(subscribers), v.Subscriptions)
	}

	// a URL pattern over the namespace, absolute, covers every path below
	below := h.token([]string{"subscribe"}, "urlpattern", h.base+live.PathMercureSubscriptions+"/*")
	exactPub := live.PathMercureSubscriptions + "/exact/" + url.QueryEscape(h.pub)
	code, v, _ = h.getSubscriptions(exactPub, below)
	if code != http.StatusOK || len(v.Subscriptions) != 2 || v.Subscriptions[0].Match != h.pub || v.ID != exactPub {
		t.Fatalf("the collection of %s: %d %+v", h.pub, code, v)
	}
	one := v.Subscriptions[0]
	code, got, _ := h.getSubscriptions(one.ID, below)
	if code != http.StatusOK || got.ID != one.ID || got.Subscriber != one.Subscriber || got.MatchType != "exact" || !got.Active {
		t.Fatalf("GET %s: %d %+v", one.ID, code, got)
	}
	if code, _, _ := h.getSubscriptions(exactPub+"/urn%3Auuid%3Anone", below); code != http.StatusNotFound {
		t.Errorf("an unknown subscriber: %d, want 404", code)
	}

	for _, c := range []struct {
		what, path, token string
		want              int
	}{
		{"no token", live.PathMercureSubscriptions, "", http.StatusUnauthorized},
		{"a token that does not verify", live.PathMercureSubscriptions, all + "x", http.StatusUnauthorized},
		{"a grant on the topics only", live.PathMercureSubscriptions, h.token([]string{"subscribe"}, "urlpattern", pattern), http.StatusForbidden},
		{"a publish grant", live.PathMercureSubscriptions, h.token([]string{"publish"}, "exact", live.PathMercureSubscriptions), http.StatusForbidden},
		{"a grant below, for the collection", live.PathMercureSubscriptions, below, http.StatusForbidden},
		{"a grant on the collection, for below", exactPub, all, http.StatusForbidden},
		{"an unknown matcher type", live.PathMercureSubscriptions + "/regexp/x", below, http.StatusNotFound},
	} {
		if code, _, _ := h.getSubscriptions(c.path, c.token); code != c.want {
			t.Errorf("%s: %d, want %d", c.what, code, c.want)
		}
	}

	a.resp.Body.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, v, _ = h.getSubscriptions(live.PathMercureSubscriptions, all)
		if len(v.Subscriptions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed session is still listed: %+v", v.Subscriptions)
		}
		time.Sleep(20 * time.Millisecond) // polling, bounded by the deadline
	}
}

// A hub that verifies no subscriber token refuses every request of the
// subscription API: no grant could cover it.
func TestMercureSubscriptions_RefusedWithoutSubscriberKeys(t *testing.T) {
	st := servertest.Start(t, nil)
	resp, err := http.Get("http://" + st.Addr + live.PathMercureSubscriptions)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("%d, want 401", resp.StatusCode)
	}
}
