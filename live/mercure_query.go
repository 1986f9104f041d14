package live

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// The query parameters of a Mercure subscription (the current draft and
// the older ones).
const (
	mercureMatch           = "match"            // exact
	mercureMatchExact      = "match_exact"      // exact, spelled out
	mercureMatchURLPattern = "match_urlpattern" // access.CompileURLPattern's subset
	mercureTopic           = "topic"            // older drafts: exact, "*" or an RFC 6570 template
	mercureLastEventID     = "last_event_id"
	mercureLastEventIDOld  = "lastEventID" // older drafts
	// MercureEarliest is the Last-Event-ID that asks for every update the
	// log still holds.
	MercureEarliest = "earliest"
)

// topicMatcher selects records by topic for a Mercure subscription: a
// topic matches when any of its matchers does. Pure.
type topicMatcher struct {
	origin   string // the hub's, for the topics that are no URL (wire.MercureTopicOf)
	all      bool
	exact    map[string]bool
	legacy   access.Selectors // the topic parameter of older drafts
	patterns []*regexp.Regexp
}

// match reports whether the channel topic topic is selected: by itself,
// or by the Mercure topic that is no URL it stands for.
func (m *topicMatcher) match(topic string) bool {
	if raw, ok := wire.MercureTopicOf(m.origin, topic); ok && m.matchOne(raw) {
		return true
	}
	return m.matchOne(topic)
}

// matchOne reports whether one spelling of a topic is selected.
func (m *topicMatcher) matchOne(topic string) bool {
	if m.all || m.exact[topic] || m.legacy.Match(topic) {
		return true
	}
	for _, re := range m.patterns {
		if re.MatchString(topic) {
			return true
		}
	}
	return false
}

// parseMercureQuery reads the matchers of a Mercure subscription and its
// resume point (the query's last_event_id or lastEventID; a
// Last-Event-ID header, given as header, takes precedence). Every error
// names the parameter and is for a 400.
func parseMercureQuery(q url.Values, header string) (wsRequest, error) {
	req := wsRequest{all: true}
	m := &topicMatcher{exact: map[string]bool{}}
	var legacy []string
	n := 0
	for name, values := range q {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "match") && name != mercureTopic {
			continue
		}
		if name != mercureMatch && name != mercureMatchExact && name != mercureMatchURLPattern && name != mercureTopic {
			return req, fmt.Errorf("%s: not a matcher type this hub implements (match, match_exact, match_urlpattern, or topic of older drafts)", wire.Clip(strconv.Quote(name)))
		}
		for _, v := range values {
			if n++; n > wire.MaxSessionChannels {
				return req, fmt.Errorf("more than %d topic matchers", wire.MaxSessionChannels)
			}
			if err := checkMatcherValue(v); err != nil {
				return req, fmt.Errorf("%s=%s: %w", name, wire.Clip(strconv.Quote(v)), err)
			}
			switch {
			case v == "*":
				m.all = true
			case name == mercureTopic:
				legacy = append(legacy, v)
			case name == mercureMatchURLPattern:
				re, err := access.CompileURLPattern(v)
				if err != nil {
					return req, fmt.Errorf("%s=%s: %w", name, wire.Clip(strconv.Quote(v)), err)
				}
				m.patterns = append(m.patterns, re)
			default:
				m.exact[v] = true
			}
		}
	}
	if n == 0 {
		return req, errors.New("name at least one topic: match (exact), match_urlpattern or topic")
	}
	sel, err := access.CompileSelectors(legacy)
	if err != nil {
		return req, fmt.Errorf("topic: %w", err)
	}
	m.legacy = sel
	req.topics = m
	id := header
	for _, k := range []string{mercureLastEventID, mercureLastEventIDOld} {
		if len(q[k]) > 1 {
			return req, fmt.Errorf("%s: given %d times, want once", k, len(q[k]))
		}
		if id == "" {
			id = q.Get(k)
		}
	}
	switch id = strings.TrimSpace(id); id {
	case "":
	case MercureEarliest:
		req.hasSince = true
	default:
		c, err := wire.ParseCursor(id)
		if err != nil || c.Epoch != "" { // a publisher's id, or a cursor of this log or another
			req.mercureAfter = id
		}
		if err == nil {
			req.since, req.epoch, req.hasSince = c.Seq, c.Epoch, true
		}
	}
	return req, nil
}

// checkMatcherValue refuses what the draft forbids in a matcher: an empty
// value, invalid UTF-8, control characters and format characters.
func checkMatcherValue(v string) error {
	if v == "" {
		return errors.New("empty")
	}
	return wire.CheckMercureString(v, access.MaxSelectorLen)
}
