package changefeed

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// uriCases are <loc> values by whether they are URIs (RFC 3986, with the
// non-ASCII characters of IRIs, RFC 3987).
var uriCases = []struct {
	loc string
	ok  bool
}{
	{"http://e/a", true},
	{"HTTPS://e.example.org:8443/a/b;c=d?e=f&g=h#i/j?k:l@m", true},
	{"http://user:pw@e/%41%7e-._~!$&'()*+,;=:@", true},
	{"http://[::1]:8080/a", true},
	{"http://[2001:db8::7]/", true},
	{"http://[v1.fe:80]/", false}, // IPvFuture: net/url refuses it too
	{"http://e:/a", true},
	{"http://例え.jp/ä?q=ü#ö", true},
	{"http://e/?q=\ue000", true}, // iprivate, query only
	{"http://e/?x=<y>", false},
	{"http://e/del]]>x", false},
	{"http://e/a b", false},
	{"http://e/a\"b", false},
	{"http://e/{a}", false},
	{"http://e/a|b", false},
	{"http://e/a\\b", false},
	{"http://e/a^b", false},
	{"http://e/a`b", false},
	{"http://e/a[0]", false},
	{"http://e/%zz", false},
	{"http://e/%4", false},
	{"http://e/a%", false},
	{"http://e/#a#b", false},
	{"http://e/a\tb", false},
	{"http://e/\ue000", false}, // iprivate outside the query
	{"http://e/\ufff0", false}, // not a ucschar
	{"http://e:80x/", false},
	{"http://e:80:81/", false},
	{"http://[::1/", false},
	{"http://[1.2.3.4]/", false},
	{"http://[fe80::1%25eth0]/", false},
	{"http://[::1]x/", false},
	{"http://a@b@c/", false},
	{"http://e]/", false},
	{"http://0@", false},
	{"http://a%41b/", false}, // net/url refuses it too
	{"http://%e4%be%8b.jp/", true},
	{"http://u@:80/", false},
}

// TestValidate_LocMustBeAURI: Strict refuses every <loc> and rs:ln href
// that is not a URI, naming the rule and the character, and accepts
// every one that is; EscapeURI mends the character-level ones.
func TestValidate_LocMustBeAURI(t *testing.T) {
	for _, tc := range uriCases {
		esc := xmlEscape(tc.loc)
		for _, where := range []string{"loc", "href"} {
			ent := `<url><loc>` + esc + `</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/></url>`
			if where == "href" {
				ent = `<url><loc>http://e/a</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/><rs:ln rel="duplicate" href="` + esc + `"/></url>`
			}
			_, err := Parse(strings.NewReader(doc(notifMD, ent)), Options{})
			if tc.ok && err != nil {
				t.Errorf("%s %q refused: %v", where, tc.loc, err)
			}
			if !tc.ok && !errors.Is(err, RuleAbsoluteURI) {
				t.Errorf("%s %q: %v, want rule %s", where, tc.loc, err, RuleAbsoluteURI)
			}
			if _, err := Parse(strings.NewReader(doc(notifMD, ent)), Options{Mode: Lenient}); err != nil {
				t.Errorf("%s %q: Lenient refuses it: %v", where, tc.loc, err)
			}
		}
		got := EscapeURI(tc.loc)
		if tc.ok && got != tc.loc {
			t.Errorf("EscapeURI(%q) = %q, want it unchanged", tc.loc, got)
		}
		if _, p := uriProblem(got); p != "" && !strings.Contains(p, "host") && !strings.Contains(p, "port") && !strings.Contains(p, "IP literal") {
			t.Errorf("EscapeURI(%q) = %q, still not a URI: %s", tc.loc, got, p)
		}
	}
	if got := EscapeURI("http://e/?x=<y>#a#b%zz ]"); got != "http://e/?x=%3Cy%3E#a%23b%25zz%20%5D" {
		t.Errorf("EscapeURI = %q", got)
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\t", "&#9;").Replace(s)
}

// FuzzLocURI: whatever a <loc> holds, Strict accepts it only when it is
// an absolute http(s) URI that net/url parses with the same host;
// EscapeURI leaves a URI as it is, is idempotent, and leaves no character
// a URI may not hold.
func FuzzLocURI(f *testing.F) {
	for _, tc := range uriCases {
		f.Add(tc.loc)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		if strings.TrimSpace(loc) != loc || loc == "" {
			return // <loc> is trimmed; an empty one breaks rule loc
		}
		x := doc(notifMD, `<url><loc>`+xmlEscape(loc)+`</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/></url>`)
		d, err := Parse(strings.NewReader(x), Options{})
		checkErr(t, err)
		if err == nil {
			u, perr := url.Parse(d.Entries[0].Loc)
			if perr != nil || u.Host == "" || !isHTTPScheme(u.Scheme) {
				t.Fatalf("Strict accepts %q, which net/url reads as %+v, %v", d.Entries[0].Loc, u, perr)
			}
		}
		e := EscapeURI(loc)
		if _, p := uriProblem(loc); p == "" && e != loc {
			t.Fatalf("EscapeURI changed the URI %q to %q", loc, e)
		}
		if EscapeURI(e) != e {
			t.Fatalf("EscapeURI not idempotent: %q, %q", e, EscapeURI(e))
		}
		scanURI(e, func(i, _ int) { t.Fatalf("EscapeURI(%q) = %q still holds %q at %d", loc, e, e[i:], i) })
	})
}
