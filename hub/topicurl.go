package hub

import "github.com/rshub/rshub/wire"

// Topics and callbacks are compared as URLs, not as bytes (WebSub §5.1.1:
// "Hubs MUST always decode non-reserved characters for these URL
// parameters"): every door normalises the topic or callback a request
// names once, as it enters (wire.NormalizeURL, RFC 3986 §6.2.2), and the
// rest of the hub reads that one spelling: a channel's stored topic, its
// lookups, a subscription's topic, callback and SubscriptionID. A channel
// stored before this rule under another spelling keeps its spelling and is
// found by any (readChannel, PutChannel).

// normalTopic returns the normal spelling of the topic URI raw that a
// request names as what, or the refusal with reason topic for a URL that
// is not one (bytes that are not UTF-8, a control character, a stray "%").
func normalTopic(what, raw string) (string, error) {
	n, err := wire.NormalizeURL(raw)
	if err != nil {
		return "", refuse(ReasonTopic, "%s %q: %v", what, wire.Clip(raw), err)
	}
	return n, nil
}

// topicOf is normalTopic for a topic the hub may create a channel for or
// fetch: it must also be an absolute http(s) URL the hub can take
// (checkHTTPURL).
func topicOf(what, raw string) (string, error) {
	n, err := normalTopic(what, raw)
	if err != nil {
		return "", err
	}
	if err := checkHTTPURL(n); err != nil {
		return "", refuse(ReasonTopic, "%s: %v", what, err)
	}
	return n, nil
}

// sameURL reports whether a and b are spellings of one URL.
func sameURL(a, b string) bool {
	if a == b {
		return true
	}
	na, err := wire.NormalizeURL(a)
	if err != nil {
		return false
	}
	nb, err := wire.NormalizeURL(b)
	return err == nil && na == nb
}

// containsURL reports whether list holds a spelling of u.
func containsURL(list []string, u string) bool {
	for _, v := range list {
		if sameURL(v, u) {
			return true
		}
	}
	return false
}
