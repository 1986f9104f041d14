package wire

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLinks_WebSubAndResourceSyncForms(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   []Link
	}{
		{"combined header", []string{`<http://t/>; rel="self", <http://h/>; rel="hub"`},
			[]Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"separate headers", []string{`<http://t/>; rel="self"`, `<http://h/>; rel=hub`},
			[]Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"spaces before semicolon", []string{`<http://t/> ; rel="self",
        <http://h/> ; rel="hub"`},
			[]Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"several rels and params", []string{`<http://x/>; title="a, b"; REL="Hub Self"; type=x`},
			[]Link{{"http://x/", []string{"hub", "self"}}}},
		{"garbage skipped", []string{`nonsense, <http://h/>; rel="hub"`},
			[]Link{{"http://h/", []string{"hub"}}}},
		{"unterminated", []string{`<http://h/; rel="hub"`}, nil},
		{"empty target skipped", []string{`<>; rel="hub"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseLinks(tt.values); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseLinks(%q) = %#v, want %#v", tt.values, got, tt.want)
			}
		})
	}
}

func TestFormatLinks_RoundTrips(t *testing.T) {
	in := []Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}, {"", []string{"x"}}}
	s := FormatLinks(in...)
	if s != `<http://t/>; rel="self", <http://h/>; rel="hub"` {
		t.Fatalf("Format = %q", s)
	}
	if got := ParseLinks([]string{s}); !reflect.DeepEqual(got, in[:2]) {
		t.Fatalf("ParseLinks(Format) = %#v", got)
	}
	if FirstLink(in, "hub") != "http://h/" || FirstLink(in, "up") != "" || len(LinksRel(in, "self")) != 1 {
		t.Fatal("First/Rel")
	}
}

// FuzzParseLinks checks that Parse never panics, returns only links with a
// target free of '>' and lower-case rels, and that formatting what it
// returns parses back to the same links.
func FuzzParseLinks(f *testing.F) {
	f.Add(`<http://t/>; rel="self", <http://h/>; rel="hub"`)
	f.Add(`<a>;rel="x y";title="q\"uo,te", <b>`)
	f.Add(`<`)
	f.Fuzz(func(t *testing.T, s string) {
		got := ParseLinks([]string{s})
		for _, l := range got {
			if l.Href == "" || strings.ContainsRune(l.Href, '>') {
				t.Fatalf("bad href %q", l.Href)
			}
			for _, r := range l.Rels {
				if r != strings.ToLower(r) || !validRel(r) {
					t.Fatalf("bad rel %q", r)
				}
			}
		}
		var clean []Link
		for _, l := range got {
			if len(l.Rels) > 0 && l.Href == strings.TrimSpace(l.Href) && !strings.ContainsAny(l.Href, "<") {
				clean = append(clean, l)
			}
		}
		if len(clean) == 0 {
			return
		}
		back := ParseLinks([]string{FormatLinks(clean...)})
		if !reflect.DeepEqual(back, clean) {
			t.Fatalf("round trip: %#v -> %#v", clean, back)
		}
	})
}

// The forms the hub meets in publishes and topic checks (moved from the
// hub's own parser when both used one).
func TestParseLinks_HubForms(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []Link
	}{
		{"one header two links", []string{`<http://t/>; rel="self", <http://h/>; rel="hub"`},
			[]Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"separate headers, spaces before ;", []string{`<http://t/> ; rel="self"`, `<http://h/> ; rel=hub`},
			[]Link{{"http://t/", []string{"self"}}, {"http://h/", []string{"hub"}}}},
		{"multiple rels, other params", []string{`<http://x/>; title="a, b; c"; rel="resourcesync alternate"`},
			[]Link{{"http://x/", []string{"resourcesync", "alternate"}}}},
		{"uppercase rel", []string{`<http://x/>; REL="Hub"`}, []Link{{"http://x/", []string{"hub"}}}},
		{"garbage skipped", []string{`junk, <http://x/>; rel=self`}, []Link{{"http://x/", []string{"self"}}}},
		{"unterminated", []string{`<http://x/; rel=self`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseLinks(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
