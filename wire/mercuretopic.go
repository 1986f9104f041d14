package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Mercure topic is any string; a channel's topic is an http(s) URL. A
// Mercure topic that is no http(s) URL (a raw string such as "orders" or
// a URN) names the channel whose topic is the hub's URL for it,
// MercureTopicURL: the hub's origin, mercureTopicDir and the topic
// percent-encoded as one path segment. That URL is the channel's topic on
// every face (WebSub's hub.topic, the channel listing, records'
// Topic); its name is derived from it as any topic's is, so the raw
// string never reaches a NATS subject, a store key or a file name. The
// Mercure face matches a record by both spellings (MercureTopicOf).

// mercureTopicDir holds the hub's URLs for Mercure topics that are no URL.
const mercureTopicDir = PathMercure + "/topic/"

// MaxMercureTopic bounds a Mercure topic that is no URL, in bytes (that
// of a topic matcher, so every such topic can be matched exactly).
const MaxMercureTopic = 2048

// IsURLTopic reports whether the Mercure topic t is an http(s) URL
// (scheme http or https, in any case), which is a channel's topic itself.
func IsURLTopic(t string) bool {
	scheme, _, ok := strings.Cut(t, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// MercureTopicURL returns the channel topic of the Mercure topic t, which
// is no URL (IsURLTopic), on the hub whose normalised origin (scheme and
// authority) is origin. Its result is already normal (NormalizeURL).
func MercureTopicURL(origin, t string) string {
	return origin + mercureTopicDir + url.PathEscape(t)
}

// MercureTopicOf returns the Mercure topic that the channel topic topic
// stands for on the hub at origin: the string MercureTopicURL made it
// from, and true; or topic itself and false.
func MercureTopicOf(origin, topic string) (string, bool) {
	if origin == "" {
		return topic, false
	}
	rest, ok := strings.CutPrefix(topic, origin+mercureTopicDir)
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#") {
		return topic, false
	}
	t, err := url.PathUnescape(rest)
	if err != nil || IsURLTopic(t) {
		return topic, false
	}
	return t, true
}

// CheckMercureString refuses what the Mercure draft forbids in a topic, a
// matcher or an id: more than max bytes, invalid UTF-8, control
// characters and format characters (Unicode Cf).
func CheckMercureString(s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("longer than %d bytes", max)
	}
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("holds the control or format character %U", r)
		}
	}
	return nil
}
