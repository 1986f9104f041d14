package wire

import (
	"net/url"
	"strings"
	"testing"
)

// NormalizeURL is RFC 3986 §6.2.2's normalisation: spellings of one URL
// give one string, different URLs stay different.
func TestNormalizeURL_OneSpellingPerURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:1/topic/%7Ealice", "http://127.0.0.1:1/topic/~alice"},
		{"http://127.0.0.1:1/topic/~alice", "http://127.0.0.1:1/topic/~alice"},
		{"HTTP://HOST:80/x", "http://host/x"},
		{"http://host/x", "http://host/x"},
		{"https://Example.COM:443", "https://example.com/"},
		{"https://example.com:", "https://example.com/"},
		{"http://example.com:0080/a", "http://example.com/a"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"https://example.com:80/a", "https://example.com:80/a"},
		{"http://example.com?q=1", "http://example.com/?q=1"},
		{"http://example.com#f", "http://example.com/#f"},
		{"http://h/k1%7Ex", "http://h/k1~x"},
		{"http://h/a%2fb", "http://h/a%2Fb"},           // reserved: kept encoded, hex upper case
		{"http://h/a%2Fb", "http://h/a%2Fb"},           // a%2Fb is not a/b
		{"http://h/%41%62%2d%5F%2E", "http://h/Ab-_."}, // path case is kept
		{"http://h/%c3%a9", "http://h/%C3%A9"},
		{"http://h/Path?Q=%7e#%7E", "http://h/Path?Q=~#~"},
		{"http://User%7e@H%41st/", "http://User~@hast/"},
		{"http://[::1]:80/", "http://[::1]/"},
		{"http://[FE80::1]:8080", "http://[fe80::1]:8080/"},
		{"http://h/./a/../b", "http://h/./a/../b"}, // dot segments are left
		{"mailto:A@B", "mailto:A@B"},
		{"", ""},
		{"HTTP://@", "http://@"},
		{"http://u@:80", "http://u@"},
	} {
		got, err := NormalizeURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// A URL that is not one (bytes that are not UTF-8, control characters, a
// stray "%") is refused, not guessed at.
func TestNormalizeURL_RefusesWhatIsNotAURL(t *testing.T) {
	for _, in := range []string{
		"http://h/\xff", "http://h/\xc3", "http://h/a\nb", "http://h/a\x00", "http://h/%", "http://h/%4", "http://h/%zz", "http://h%/", "%41:", "1http://h/",
	} {
		if got, err := NormalizeURL(in); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzNormalizeURL checks that NormalizeURL never panics, is idempotent,
// only ever returns UTF-8, and that a URL net/url parses means the same
// URL after normalisation (same scheme, host and unescaped path). Seeds
// are in testdata/fuzz/FuzzNormalizeURL.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:1/topic/%7Ealice", "HTTP://HOST:80/x", "https://a:443", "http://[::1]:0080/%2f%7e?%41#%61",
		"http://u%40:p@H/", "//h:80/x", "x:y%", "%", "http://h:/", "http://h:65536/", "\xff", "a:", "http://h]:80/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeURL(in)
		if err != nil {
			return
		}
		again, err := NormalizeURL(out)
		if err != nil || again != out {
			t.Fatalf("NormalizeURL(%q) = %q, and again %q (%v): not idempotent", in, out, again, err)
		}
		u, err := url.Parse(in)
		if err != nil || !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
			return
		}
		v, err := url.Parse(out)
		if err != nil {
			t.Fatalf("url.Parse(%q) ok, of its normal form %q: %v", in, out, err)
		}
		path := u.Path
		if path == "" && u.Hostname() != "" {
			path = "/"
		}
		if !strings.EqualFold(u.Scheme, v.Scheme) || !strings.EqualFold(u.Hostname(), v.Hostname()) || path != v.Path {
			t.Fatalf("%q normalised to %q: scheme %q/%q host %q/%q path %q/%q", in, out, u.Scheme, v.Scheme, u.Hostname(), v.Hostname(), u.Path, v.Path)
		}
	})
}
