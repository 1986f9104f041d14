package live

import (
	"net/url"
	"slices"
	"testing"
)

func TestEscapeVar_EncodesAllButUnreservedOnce(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/:selector":                 "https%3A%2F%2Fexample.com%2F%3Aselector",
		"urn:uuid:bb3de268-05b0-4c65-b44e-8f9acefc29d6": "urn%3Auuid%3Abb3de268-05b0-4c65-b44e-8f9acefc29d6",
		"a%2Fb ~_.": "a%252Fb%20~_.",
		"é":         "%C3%A9",
	} {
		if got := escapeVar(in); got != want {
			t.Errorf("escapeVar(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchersOf_OneSubscriptionPerDistinctMatcher(t *testing.T) {
	q := url.Values{
		"match":            {"https://h/topics/a", "https://h/topics/a"},
		"match_exact":      {"https://h/topics/a"},
		"match_urlpattern": {"https://h/topics/:n"},
		"topic":            {"https://h/topics/{n}", "*"},
		"last_event_id":    {"12"},
	}
	want := []mercureMatcher{{"exact", "*"}, {"exact", "https://h/topics/a"}, {"uritemplate", "https://h/topics/{n}"}, {"urlpattern", "https://h/topics/:n"}}
	if got := matchersOf(q); !slices.Equal(got, want) {
		t.Fatalf("matchersOf = %v, want %v", got, want)
	}
}

func TestParseSubscriptionsPath_ReadsWhatSubscriptionIDWrites(t *testing.T) {
	m := mercureMatcher{"urlpattern", "https://example.com/a b/:id?x=1#f"}
	for _, sub := range []string{"", "urn:uuid:1e0cba4c-4bcd-44f0-ae8a-7b76f7ef1280"} {
		p, ok := parseSubscriptionsPath(subscriptionID(m, sub))
		if !ok || p.matcher == nil || *p.matcher != m || p.subscriber != sub || p.topic() != subscriptionID(m, sub) {
			t.Errorf("subscriber %q: parsed %+v %v", sub, p, ok)
		}
	}
	if p, ok := parseSubscriptionsPath(PathMercureSubscriptions); !ok || p.matcher != nil || p.topic() != PathMercureSubscriptions {
		t.Errorf("the collection: %+v %v", p, ok)
	}
	for _, bad := range []string{PathMercureSubscriptions + "/", PathMercureSubscriptions + "/exact", PathMercureSubscriptions + "x/exact/a",
		PathMercureSubscriptions + "/exact//s", PathMercureSubscriptions + "/exact/a/b/c", PathMercureSubscriptions + "/exact/%zz", PathMercureSubscriptions + "/Exact/a", "/other"} {
		if p, ok := parseSubscriptionsPath(bad); ok {
			t.Errorf("%s: served as %+v", bad, p)
		}
	}
}

func FuzzParseSubscriptionsPath(f *testing.F) {
	f.Add(PathMercureSubscriptions + "/exact/https%3A%2F%2Fh%2Fa/urn%3Auuid%3A1")
	f.Add(PathMercureSubscriptions + "/urlpattern/%2F%2F%25/x")
	f.Fuzz(func(t *testing.T, path string) {
		p, ok := parseSubscriptionsPath(path)
		if !ok || p.matcher == nil {
			return
		}
		// what it reads is named by its canonical id, which reads the same
		again, ok := parseSubscriptionsPath(p.topic())
		if !ok || again.matcher == nil || *again.matcher != *p.matcher || again.subscriber != p.subscriber {
			t.Fatalf("%q read as %+v; its id %q read as %+v %v", path, p, p.topic(), again, ok)
		}
	})
}
