package access_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rshub/rshub/access"
)

func TestURLPattern_MatchesTheSubset(t *testing.T) {
	for _, tc := range []struct {
		pattern, topic string
		want           bool
	}{
		{"https://example.net/foo/:id", "https://example.net/foo/42", true},
		{"https://example.net/foo/:id", "https://example.net/foo/", false},
		{"https://example.net/foo/:id", "https://example.net/foo/4/2", false},
		{"https://example.net/foo/:id", "https://example.net/foo/42?x=1", false},
		{"https://example.net/foo/:id", "https://example.net/bar/42", false},
		{"https://example.net/foo/:id", "xhttps://example.net/foo/42", false},
		{"https://example.net/:a/:b", "https://example.net/x/y", true},
		{"https://example.net/users/42/*", "https://example.net/users/42/", true},
		{"https://example.net/users/42/*", "https://example.net/users/42/a/b?c", true},
		{"https://example.net/users/42/*", "https://example.net/users/43/a", false},
		{"*", "anything at all", true},
		{"https://example.net/a.b", "https://example.net/aXb", false}, // "." is literal
		{"https://example.net/a.b", "https://example.net/a.b", true},
		{"https://example.net/$[x]^", "https://example.net/$[x]^", true},
		{"urn:isbn:x", "urn:isbn:42", true}, // after the scheme, :x is a parameter
		{"urn:isbn:x", "urn:abc:42", false},
		{"http://127.0.0.1:8080/:p", "http://127.0.0.1:8080/q", true},
		{"svn+ssh://e/:p", "svn+ssh://e/q", true},
		{"https://EXAMPLE.net/x", "https://example.net/x", false}, // byte for byte, host too (documented)
	} {
		re, err := access.CompileURLPattern(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		if got := re.MatchString(tc.topic); got != tc.want {
			t.Errorf("%q against %q: %v, want %v", tc.pattern, tc.topic, got, tc.want)
		}
	}
}

func TestURLPattern_RefusesWhatItDoesNotImplement(t *testing.T) {
	for _, p := range []string{
		"", "https://e/:", "https://e/:-x", "https://e/a:", "https://e/(\\d+)", "https://e/{a}?", "https://e/:id?",
		"https://e/*?", "https://e/a\\b", "https://e/:id+", strings.Repeat("a", access.MaxURLPatternLen+1),
	} {
		if _, err := access.CompileURLPattern(p); err == nil {
			t.Errorf("%q compiled, want an error", p)
		}
	}
}

// FuzzURLPattern: compiling never panics; a compiled pattern matches the
// topic made by filling each :name with a segment and each * with any
// text, and matches nothing once a literal byte of it changes.
func FuzzURLPattern(f *testing.F) {
	for _, s := range []string{"https://example.net/foo/:id", "https://e/users/*/x", "*", "a:b*c", "https://e/a.b", "(x)"} {
		f.Add(s, "seg")
	}
	f.Fuzz(func(t *testing.T, p, fill string) {
		re, err := access.CompileURLPattern(p)
		if err != nil {
			return
		}
		if fill == "" || strings.ContainsAny(fill, "/?#") {
			fill = "x"
		}
		topic := fillPattern(p, fill)
		if !re.MatchString(topic) {
			t.Fatalf("%q does not match its own filling %q", p, topic)
		}
		if !strings.ContainsAny(p, ":*") && re.MatchString(p+"x") {
			t.Fatalf("literal %q matches a longer topic", p)
		}
	})
}

// fillPattern replaces each :name of p with fill and each * with fill.
func fillPattern(p, fill string) string {
	var b strings.Builder
	schemeEnd := 0
	if m := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`).FindString(p); m != "" {
		schemeEnd = len(m)
	}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case ':':
			if i < schemeEnd || i+1 < len(p) && p[i+1] >= '0' && p[i+1] <= '9' {
				b.WriteByte(':')
				continue
			}
			j := i + 1
			for j < len(p) && (p[j] == '_' || p[j] >= 'a' && p[j] <= 'z' || p[j] >= 'A' && p[j] <= 'Z' || j > i+1 && p[j] >= '0' && p[j] <= '9') {
				j++
			}
			b.WriteString(fill)
			i = j - 1
		case '*':
			b.WriteString(fill)
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}
