package access

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSelectors_MatchTopicsLikeMercure(t *testing.T) {
	const book = "https://example.org/books/1"
	cases := []struct {
		name      string
		selectors []string
		topic     string
		want      bool
	}{
		{"star matches any topic", []string{"*"}, book, true},
		{"exact topic", []string{book}, book, true},
		{"exact topic is not a prefix", []string{"https://example.org/books/"}, book, false},
		{"template with a variable", []string{"https://example.org/books/{id}"}, book, true},
		{"template does not cross a slash", []string{"https://example.org/{id}"}, book, false},
		{"reserved expansion crosses slashes", []string{"https://example.org/{+rest}"}, book, true},
		{"template of another host", []string{"https://other.example/books/{id}"}, book, false},
		{"no selectors", nil, book, false},
		{"empty topic never matches", []string{"*"}, "", false},
		{"regexp characters in an exact topic are literal", []string{"https://example.org/books/."}, "https://example.org/books/x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := CompileSelectors(c.selectors)
			if err != nil {
				t.Fatal(err)
			}
			g := Grant{subscribe: s}
			if got := g.Allows(Subscribe, c.topic); got != c.want {
				t.Errorf("Allows(%q) = %v, want %v", c.topic, got, c.want)
			}
			if g.Allows(Publish, c.topic) {
				t.Errorf("a subscribe selector granted publish")
			}
		})
	}
}

func TestSelectors_RefuseHostileLists(t *testing.T) {
	for name, list := range map[string][]string{
		"too many":        make([]string, MaxSelectors+1),
		"too long":        {strings.Repeat("a", MaxSelectorLen+1)},
		"broken template": {"https://example.org/{id"},
	} {
		if _, err := CompileSelectors(list); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

func TestGrantOf_ReadsMercureClaims(t *testing.T) {
	var c Claims
	if err := json.Unmarshal([]byte(`{"exp": 2000000000, "mercure": {"subscribe": ["https://a.example/{x}"], "publish": ["https://a.example/p"], "payload": {"user": 1}}}`), &c); err != nil {
		t.Fatal(err)
	}
	g, err := GrantOf(&c)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Allows(Subscribe, "https://a.example/s") || g.Allows(Subscribe, "https://a.example/s/t") {
		t.Error("subscribe selectors not applied")
	}
	if !g.Allows(Publish, "https://a.example/p") || g.Allows(Publish, "https://a.example/q") {
		t.Error("publish selectors not applied")
	}
	if g.Expires.Unix() != 2000000000 {
		t.Errorf("Expires = %v", g.Expires)
	}
}

// FuzzClaims feeds hostile claim sets to the claims reader and the
// selectors: nothing panics, a grant allows nothing for the empty topic,
// and an exact selector that compiles matches itself.
func FuzzClaims(f *testing.F) {
	f.Add(`{"mercure":{"subscribe":["*"]}}`, "https://example.org/a")
	f.Add(`{"mercure":{"subscribe":["https://example.org/{id}"],"publish":["https://example.org/{+p}"]}}`, "https://example.org/b")
	f.Add(`{"mercure":{"subscribe":["{/a*}{?b,c}{#d}{;e:3}"]}}`, "/x/y?b=1")
	f.Add(`{"mercure":{"subscribe":"*"}}`, "x")
	f.Add(`{"exp":"tomorrow"}`, "")
	f.Fuzz(func(t *testing.T, claims, topic string) {
		var c Claims
		if json.Unmarshal([]byte(claims), &c) != nil {
			return
		}
		g, err := GrantOf(&c)
		if err != nil {
			return
		}
		if g.Allows(Subscribe, "") || g.Allows(Publish, "") {
			t.Fatal("a grant allowed the empty topic")
		}
		g.Allows(Subscribe, topic)
		g.Allows(Publish, topic)
		for _, s := range c.Mercure.Subscribe {
			if s != "" && !strings.ContainsAny(s, "{}") && !g.Allows(Subscribe, s) {
				t.Fatalf("exact selector %q does not match itself", s)
			}
		}
	})
}
