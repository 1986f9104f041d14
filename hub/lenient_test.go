package hub_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// followedList is a Change List with one entry whose <loc> (XML-escaped)
// is loc.
func followedList(loc string) string {
	loc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(loc)
	return `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>
<url><loc>http://example.org/ok</loc><rs:md change="created" datetime="2024-01-01T00:00:01Z"/></url>
<url><loc>` + loc + `</loc><rs:md change="updated" datetime="2024-01-01T00:00:02Z"/></url>
</urlset>`
}

// A followed Source's <loc> that is not a URI is refused in strict mode;
// in lenient mode the characters a URI may not hold are percent-encoded
// (recorded as leniency absolute-uri), and an entry that is still not an
// absolute http(s) URI is dropped (recorded too): every <loc> published is
// a URI, whatever the Source wrote.
func TestParseFollowed_LocThatIsNotAURI(t *testing.T) {
	for _, tc := range []struct{ loc, want string }{
		{"http://example.org/?x=<y>", "http://example.org/?x=%3Cy%3E"},
		{"http://example.org/del]]>x", "http://example.org/del%5D%5D%3Ex"},
		{"http://example.org/a b#c#d", "http://example.org/a%20b#c%23d"},
		{"rel ative/x", "http://example.org/rel%20ative/x"},
		{"http://example.org:8x/a", ""}, // dropped
		{"http://[::1/a", ""},           // dropped
	} {
		body := []byte(followedList(tc.loc))
		if _, _, err := hub.ParseFollowed(body, "http://example.org/cl.xml", false, 1<<20); !errors.Is(err, changefeed.RuleAbsoluteURI) {
			t.Errorf("strict, %q: %v, want rule absolute-uri", tc.loc, err)
		}
		doc, ls, err := hub.ParseFollowed(body, "http://example.org/cl.xml", true, 1<<20)
		if err != nil {
			t.Fatalf("lenient, %q: %v", tc.loc, err)
		}
		var locs []string
		for _, e := range doc.Entries {
			locs = append(locs, e.Loc)
		}
		want := []string{"http://example.org/ok"}
		if tc.want != "" {
			want = append(want, tc.want)
		}
		if fmt.Sprint(locs) != fmt.Sprint(want) {
			t.Errorf("lenient, %q: locs %q, want %q", tc.loc, locs, want)
		}
		recorded := false
		for _, l := range ls {
			recorded = recorded || l.Rule == string(changefeed.RuleAbsoluteURI)
		}
		if !recorded {
			t.Errorf("lenient, %q: leniency absolute-uri not recorded: %+v", tc.loc, ls)
		}
	}
}

// FuzzParseFollowed: whatever a followed Source serves, every <loc> that
// ParseFollowed returns, strict or lenient, is an absolute http(s) URI
// that net/url parses.
func FuzzParseFollowed(f *testing.F) {
	for _, loc := range []string{"http://example.org/?x=<y>", "http://example.org/del]]>x", "res/b", "http://e:8x/", "http://例え.jp/ä", "%zz", "http://[::1]/"} {
		f.Add([]byte(followedList(loc)))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, lenient := range []bool{false, true} {
			doc, _, err := hub.ParseFollowed(body, "http://example.org/cl.xml", lenient, 1<<16)
			if err != nil {
				continue
			}
			for _, e := range doc.Entries {
				if p := changefeed.LocProblem(e.Loc); p != "" {
					t.Fatalf("lenient %v: <loc> %q %s", lenient, e.Loc, p)
				}
				if u, err := url.Parse(e.Loc); err != nil || u.Host == "" {
					t.Fatalf("lenient %v: <loc> %q: net/url: %v", lenient, e.Loc, err)
				}
			}
		}
	})
}
