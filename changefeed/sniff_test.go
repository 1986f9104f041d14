package changefeed

import (
	"strings"
	"testing"
)

// Sniff recognises what claims to be a Sitemap or ResourceSync document,
// valid or not, and any DTD.
func TestSniff_ClaimsAndDTD(t *testing.T) {
	const rs = `xmlns:rs="http://www.openarchives.org/rs/terms/"`
	for _, tc := range []struct {
		name    string
		body    string
		rs, dtd bool
	}{
		{"Notification", doc(notifMD, okEnt(1)), true, false},
		{"ChangeListWithoutFrom", doc(`<rs:md capability="changelist"/>`, okEnt(1)), true, false},
		{"PlainSitemap", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://e/a</loc></url></urlset>`, true, false},
		{"SitemapIndex", `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`, true, false},
		{"UrlsetInOtherNamespace", `<urlset xmlns="urn:x"><url/></urlset>`, false, false},
		{"RSMDDeepInAtom", `<feed xmlns="http://www.w3.org/2005/Atom" ` + rs + `><entry><rs:md capability="changelist"/></entry></feed>`, true, false},
		{"RSLinkOnly", `<feed xmlns="http://www.w3.org/2005/Atom" ` + rs + `><rs:ln rel="up" href="http://e/"/></feed>`, false, false},
		{"Atom", `<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>`, false, false},
		{"Doctype", xmlDecl + "\n<!DOCTYPE x [<!ENTITY a \"b\">]>\n<x/>", false, true},
		{"DoctypeBeforeUrlset", xmlDecl + "<!DOCTYPE urlset>" + rootOpen + notifMD + "</urlset>", false, true},
		{"DoctypeTextInComment", `<x><!-- <!DOCTYPE x> --></x>`, false, false},
		{"MalformedChangeList", rootOpen + `<rs:md capability="changelist" from="2013-01-01T00:00:00Z"><url>`, true, false},
		{"MalformedNamingRS", `<x>` + NSRS + `</y>`, true, false},
		{"Latin1WithDoctype", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<!DOCTYPE x>\n<x>\xe9</x>", false, true},
		{"NotXML", "hello, world", false, false},
		{"Empty", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Sniff([]byte(tc.body))
			if got.ResourceSync != tc.rs || got.DTD != tc.dtd {
				t.Fatalf("Sniff = %+v, want ResourceSync %v DTD %v", got, tc.rs, tc.dtd)
			}
		})
	}
}

// Sniff stops at the root of a Sitemap document: a large one costs nothing.
func TestSniff_StopsAtSitemapRoot(t *testing.T) {
	body := rootOpen + strings.Repeat(okEnt(1), 100000) // not even closed
	if got := Sniff([]byte(body)); !got.ResourceSync || got.Err != nil {
		t.Fatalf("%+v", got)
	}
}
