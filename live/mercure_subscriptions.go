package live

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// PathMercureSubscriptions is the root of the Mercure subscription API:
// the collection, then /{match_type}/{match} and
// /{match_type}/{match}/{subscriber} below it.
const PathMercureSubscriptions = wire.PathMercure + "/subscriptions"

// mercureContext is the JSON-LD context of the subscription documents of
// older drafts, which clients of the reference hub still read.
const mercureContext = "https://mercure.rocks/"

// The matcher types a subscription is listed with: the draft's, and
// uritemplate for a topic parameter of older drafts holding a template.
const (
	matchExact       = "exact"
	matchURLPattern  = "urlpattern"
	matchURITemplate = "uritemplate"
)

// mercureMatcher is one topic matcher of a Mercure session, as given.
type mercureMatcher struct{ typ, match string }

// mercureSub is a Mercure session as the subscription API lists it: its
// subscriber, an identifier of the connection the hub made, and its
// matchers, each a subscription.
type mercureSub struct {
	subscriber string
	matchers   []mercureMatcher
}

// mercureSubs are this process's open Mercure sessions. The zero value
// is ready.
type mercureSubs struct {
	mu   sync.Mutex
	subs map[*mercureSub]struct{}
}

// track lists a session subscribing with the query q (already admitted)
// until the returned function is called.
func (m *mercureSubs) track(q url.Values) func() {
	s := &mercureSub{subscriber: "urn:uuid:" + newUUID(), matchers: matchersOf(q)}
	m.mu.Lock()
	if m.subs == nil {
		m.subs = map[*mercureSub]struct{}{}
	}
	m.subs[s] = struct{}{}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.subs, s)
		m.mu.Unlock()
	}
}

// matchersOf reads the matchers of a Mercure subscription's query, each
// once, sorted. Pure.
func matchersOf(q url.Values) []mercureMatcher {
	var out []mercureMatcher
	for name, values := range q {
		for _, v := range values {
			switch {
			case name == mercureMatch || name == mercureMatchExact:
				out = append(out, mercureMatcher{matchExact, v})
			case name == mercureMatchURLPattern:
				out = append(out, mercureMatcher{matchURLPattern, v})
			case name == mercureTopic && v != "*" && strings.ContainsAny(v, "{}"):
				out = append(out, mercureMatcher{matchURITemplate, v})
			case name == mercureTopic:
				out = append(out, mercureMatcher{matchExact, v})
			}
		}
	}
	slices.SortFunc(out, func(a, b mercureMatcher) int { return strings.Compare(a.typ+"\x00"+a.match, b.typ+"\x00"+b.match) })
	return slices.Compact(out)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// subscriptionDoc is a subscription as the draft describes it; topic and
// @context are those of older drafts.
type subscriptionDoc struct {
	Context    string `json:"@context,omitempty"`
	ID         string `json:"id"`
	Type       string `json:"type"`
	MatchType  string `json:"match_type"`
	Match      string `json:"match"`
	Topic      string `json:"topic"`
	Subscriber string `json:"subscriber"`
	Active     bool   `json:"active"`
}

// subscriptionsDoc is a collection of subscriptions; lastEventID is that
// of older drafts (the current one has it in the Link header).
type subscriptionsDoc struct {
	Context       string            `json:"@context"`
	ID            string            `json:"id"`
	Type          string            `json:"type"`
	LastEventID   string            `json:"lastEventID"`
	Subscriptions []subscriptionDoc `json:"subscriptions"`
}

// escapeVar percent-encodes s as an RFC 6570 simple expansion does: every
// byte but the unreserved characters. Pure.
func escapeVar(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// subscriptionID is the id, and topic, of a subscription (or, with
// subscriber "", of its matcher's collection).
func subscriptionID(m mercureMatcher, subscriber string) string {
	id := PathMercureSubscriptions + "/" + m.typ + "/" + escapeVar(m.match)
	if subscriber != "" {
		id += "/" + escapeVar(subscriber)
	}
	return id
}

// list returns the documents of the subscriptions that want selects, by
// id.
func (m *mercureSubs) list(want func(mercureMatcher, string) bool) []subscriptionDoc {
	out := []subscriptionDoc{}
	m.mu.Lock()
	for s := range m.subs {
		for _, mt := range s.matchers {
			if want(mt, s.subscriber) {
				out = append(out, subscriptionDoc{ID: subscriptionID(mt, s.subscriber), Type: "subscription",
					MatchType: mt.typ, Match: mt.match, Topic: mt.match, Subscriber: s.subscriber, Active: true})
			}
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b subscriptionDoc) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// subscriptionsPath is a request of the subscription API: the
// collection (no matcher), one matcher's, or one subscription.
type subscriptionsPath struct {
	matcher    *mercureMatcher
	subscriber string
}

// parseSubscriptionsPath reads an escaped request path under
// PathMercureSubscriptions; ok is false for a path the API does not
// serve (a matcher type no subscription has among them). Pure.
func parseSubscriptionsPath(escaped string) (p subscriptionsPath, ok bool) {
	rest, found := strings.CutPrefix(escaped, PathMercureSubscriptions)
	if !found {
		return p, false
	}
	if rest == "" {
		return p, true
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if !strings.HasPrefix(rest, "/") || len(parts) < 2 || len(parts) > 3 {
		return p, false
	}
	vals := make([]string, len(parts))
	for i, s := range parts {
		v, err := url.PathUnescape(s)
		if err != nil || v == "" {
			return p, false
		}
		vals[i] = v
	}
	switch vals[0] {
	case matchExact, matchURLPattern, matchURITemplate:
	default:
		return p, false
	}
	p.matcher = &mercureMatcher{typ: vals[0], match: vals[1]}
	if len(vals) == 3 {
		p.subscriber = vals[2]
	}
	return p, true
}

// topic is the relative topic a request of the API is authorised for.
func (p subscriptionsPath) topic() string {
	if p.matcher == nil {
		return PathMercureSubscriptions
	}
	return subscriptionID(*p.matcher, p.subscriber)
}

// MercureSubscriptions returns the handler of the Mercure subscription
// API at PathMercureSubscriptions: the open Mercure sessions of this
// process (not of the other hubs of a cluster), each matcher of a session
// a subscription whose subscriber is an identifier the hub gave the
// connection. A caller needs a token (as MercureSubscribe reads it,
// verified with rules) granting subscribe on the requested path, or on
// the path resolved against origin (the hub URL's scheme and host): 401
// without one or for one that does not verify, 403 when the grant does
// not cover it. The Link header names the hub with the log's last cursor
// as last-event-id. No subscription events are published.
func (ls *Sessions) MercureSubscriptions(rules access.AccessRules, origin string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ls.streamMethod(w, r, "read the subscriptions with GET") {
			return
		}
		if !ls.originAllowed(r) {
			ls.cfg.Refusals.Refuse(w, hub.ReasonOrigin, "origin not allowed")
			return
		}
		ls.allowOrigin(w, r)
		w.Header().Set("Access-Control-Expose-Headers", "Link")
		if ls.cfg.Token != "" && r.URL.Query().Get(wire.ParamToken) != ls.cfg.Token {
			ls.cfg.Refusals.Refuse(w, hub.ReasonSessionToken, "missing or wrong token: this hub's live sessions need ?token=")
			return
		}
		p, ok := parseSubscriptionsPath(r.URL.EscapedPath())
		if !ok {
			http.NotFound(w, r)
			return
		}
		if ref := ls.authorizeSubscriptions(r, rules, origin+p.topic(), p.topic()); ref != nil {
			ref.Write(w)
			return
		}
		last := ls.lastEventID(r.Context())
		var body any
		switch {
		case p.subscriber != "":
			docs := ls.mercure.list(func(m mercureMatcher, sub string) bool { return m == *p.matcher && sub == p.subscriber })
			if len(docs) == 0 {
				http.NotFound(w, r)
				return
			}
			docs[0].Context = mercureContext
			body = docs[0]
		default:
			docs := ls.mercure.list(func(m mercureMatcher, _ string) bool { return p.matcher == nil || m == *p.matcher })
			body = subscriptionsDoc{Context: mercureContext, ID: p.topic(), Type: "subscriptions",
				LastEventID: last, Subscriptions: docs}
		}
		h := w.Header()
		h.Set("Link", fmt.Sprintf(`<%s%s>; rel="%s"; last-event-id=%q; type="mercure"; content-type="application/json"`,
			origin, wire.PathMercure, wire.RelMercure, last))
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-cache")
		_ = json.NewEncoder(w).Encode(body)
	})
}

// authorizeSubscriptions refuses a request of the subscription API whose
// token does not grant subscribe on topic (relative) or abs (the same,
// absolute); nil lets it through.
func (ls *Sessions) authorizeSubscriptions(r *http.Request, rules access.AccessRules, abs, topic string) *access.Refusal {
	tok := access.TokenFrom(r, "")
	if tok == "" {
		return &access.Refusal{Status: http.StatusUnauthorized, Reason: "the subscription API needs a token granting subscribe on " + wire.Clip(topic)}
	}
	g, err := ls.cfg.Readers.VerifyAccess(r.Context(), tok, rules)
	if err != nil {
		return &access.Refusal{Status: http.StatusUnauthorized, Reason: err.Error()}
	}
	if !g.Allows(access.Subscribe, topic) && !g.Allows(access.Subscribe, abs) {
		return &access.Refusal{Status: http.StatusForbidden, Reason: "the token grants no subscribe on " + wire.Clip(topic)}
	}
	return nil
}

// lastEventID is the cursor of the log's last record, "earliest" when it
// holds none (or cannot be read).
func (ls *Sessions) lastEventID(ctx context.Context) string {
	_, last, err := ls.cfg.Log.Bounds(ctx)
	if err != nil || last == 0 {
		return MercureEarliest
	}
	return wire.Cursor{Epoch: logEpoch(ls.cfg.Log), Seq: last}.String()
}
