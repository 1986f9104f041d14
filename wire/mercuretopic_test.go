package wire_test

import (
	"testing"

	"github.com/rshub/rshub/wire"
)

const testOrigin = "https://hub.example"

func TestMercureTopicURL_RoundTripsAndIsNormal(t *testing.T) {
	for _, topic := range []string{"foo", "0123456789abcdef", "..", "a/b?c#d", "urn:isbn:0451450523", "ünï cödé", "%41", "+&=;:@$,"} {
		u := wire.MercureTopicURL(testOrigin, topic)
		if n, err := wire.NormalizeURL(u); err != nil || n != u {
			t.Errorf("%q: %s normalises to %q (%v)", topic, u, n, err)
		}
		if got, ok := wire.MercureTopicOf(testOrigin, u); !ok || got != topic {
			t.Errorf("%q: %s reads back as %q, %v", topic, u, got, ok)
		}
	}
	for _, topic := range []string{"https://example.net/foo", testOrigin + "/topics/a", "http://other.example" + wire.PathMercure + "/topic/foo"} {
		if got, ok := wire.MercureTopicOf(testOrigin, topic); ok || got != topic {
			t.Errorf("%s read as the Mercure topic %q", topic, got)
		}
	}
	for topic, want := range map[string]bool{"https://a.example/x": true, "HTTP://a.example": true, "foo": false, "urn:x": false, "ftp://a.example": false} {
		if got := wire.IsURLTopic(topic); got != want {
			t.Errorf("IsURLTopic(%q) = %v", topic, got)
		}
	}
}

func TestCheckMercureString_RefusesWhatTheDraftForbids(t *testing.T) {
	for _, bad := range []string{"a\x00b", "tab\there", "\u200bzero-width", string([]byte{0xff}), string(make([]byte, 11))} {
		if wire.CheckMercureString(bad, 10) == nil {
			t.Errorf("%q taken", bad)
		}
	}
	if err := wire.CheckMercureString("ok topic ü", 64); err != nil {
		t.Error(err)
	}
}

// FuzzMercureTopicURL: every topic that is no URL and passes
// CheckMercureString maps to a normal URL that reads back as the topic.
func FuzzMercureTopicURL(f *testing.F) {
	for _, s := range []string{"foo", "..", "a/b", "%zz", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, topic string) {
		if topic == "" || wire.IsURLTopic(topic) || wire.CheckMercureString(topic, wire.MaxMercureTopic) != nil {
			return
		}
		u := wire.MercureTopicURL(testOrigin, topic)
		if n, err := wire.NormalizeURL(u); err != nil || n != u {
			t.Fatalf("%q: %s normalises to %q (%v)", topic, u, n, err)
		}
		if got, ok := wire.MercureTopicOf(testOrigin, u); !ok || got != topic {
			t.Fatalf("%q: reads back as %q, %v", topic, got, ok)
		}
	})
}
