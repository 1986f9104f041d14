package changefeed

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

const foreignDoc = `<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="s.xsl"?>
<!-- a comment -->
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:ex="http://example.org/ext"
        xsi:schemaLocation="http://www.sitemaps.org/schemas/sitemap/0.9 sitemap.xsd">
  <rs:ln rel="up" href="http://example.com/cl.xml" ex:note="root link"/>
  <rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z" ex:seq="42"/>
  <ex:source xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title xml:lang="en">A &amp; B</dc:title><![CDATA[<raw>]]></ex:source>
  <url ex:flag="1">
    <loc> http://example.com/a?x=1&amp;y=&apos;2&apos; </loc>
    <lastmod>2013-01-03</lastmod>
    <changefreq>hourly</changefreq>
    <priority>0.5</priority>
    <rs:md change="created" datetime="2013-01-03T00:01:00Z" hash="md5:1584abdf8ebdc9802ac0c6a7402c03b6" length="0"
           type="text/html" encoding="gzip" path="/a" other:x="&#10;tab&#9;" xmlns:other="urn:other"/>
    <rs:ln rel="duplicate" href="http://m.example.com/a" pri="2" length="10" modified="2013-01-02T10:00Z"
           hash="sha-1:da39a3ee5e6b4b0d3255bfef95601890afd80709" type="text/html" encoding="br" path="/m" ex:why="mirror"/>
    <ex:thing a="1" ex:b="&quot;2&quot;"><ex:inner/>text<deep xmlns="urn:deep"><deeper/></deep><plain xmlns=""/></ex:thing>
    <geo:point xmlns:geo="urn:geo" xmlns="urn:default-ignored">1 2</geo:point>
  </url>
  <url><loc>http://example.com/b</loc><rs:md change="deleted" datetime="2013-01-03T00:02:00.5+00:00"/></url>
  <ex:after>trailing</ex:after>
</urlset>
<!-- done -->
`

func TestRoundTrip_ForeignContentKept(t *testing.T) {
	doc1, err := Parse(strings.NewReader(foreignDoc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := doc1.Ext.Attrs; len(got) != 1 || got[0].Name.Space != "http://www.w3.org/2001/XMLSchema-instance" || got[0].Name.Local != "schemaLocation" {
		t.Fatalf("root ext attrs %+v", got)
	}
	if got := doc1.MD.Ext; len(got) != 1 || got[0] != (xml.Attr{Name: xml.Name{Space: "http://example.org/ext", Local: "seq"}, Value: "42"}) {
		t.Fatalf("root md ext %+v", got)
	}
	if len(doc1.Ext.Elements) != 1 || doc1.Ext.Elements[0].Name.Local != "source" {
		t.Fatalf("root ext elements %+v", doc1.Ext.Elements)
	}
	wantSource := `<ex:source xmlns:ex="http://example.org/ext" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title xml:lang="en">A &amp; B</dc:title>&lt;raw&gt;</ex:source>`
	if string(doc1.Ext.Elements[0].XML) != wantSource {
		t.Fatalf("canonical raw\n got %s\nwant %s", doc1.Ext.Elements[0].XML, wantSource)
	}
	e := doc1.Entries[0]
	if e.Loc != "http://example.com/a?x=1&y='2'" || e.ChangeFreq != "hourly" || e.Priority != "0.5" || e.LastMod.Raw != "2013-01-03" {
		t.Fatalf("entry fields %+v", e)
	}
	if e.MD.Length != 0 || e.MD.Encoding != "gzip" || e.MD.Path != "/a" || len(e.MD.Ext) != 1 || e.MD.Ext[0].Value != "\ntab\t" {
		t.Fatalf("entry md %+v", e.MD)
	}
	l := e.Links[0]
	if l.Pri != 2 || l.Length != 10 || l.Modified.Raw != "2013-01-02T10:00Z" || len(l.Ext) != 1 {
		t.Fatalf("link %+v", l)
	}
	if len(e.Ext.Attrs) != 1 || len(e.Ext.Elements) != 2 {
		t.Fatalf("entry ext %+v", e.Ext)
	}
	wantThing := `<ex:thing xmlns="" xmlns:ex="http://example.org/ext" xmlns:ns0="urn:deep" a="1" ex:b="&quot;2&quot;"><ex:inner/>text<ns0:deep><ns0:deeper/></ns0:deep><plain/></ex:thing>`
	if string(e.Ext.Elements[0].XML) != wantThing {
		t.Fatalf("canonical raw\n got %s\nwant %s", e.Ext.Elements[0].XML, wantThing)
	}
	if len(doc1.Trailer) != 1 || doc1.Trailer[0].Name.Local != "after" {
		t.Fatalf("trailer %+v", doc1.Trailer)
	}

	var out bytes.Buffer
	if err := Encode(&out, doc1); err != nil {
		t.Fatal(err)
	}
	doc2, err := Parse(bytes.NewReader(out.Bytes()), Options{})
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, out.Bytes())
	}
	if !reflect.DeepEqual(doc1, doc2) {
		t.Fatalf("round trip changed the model:\n%s", out.Bytes())
	}
	// The encoder's output is well-formed for encoding/xml as well.
	dec := xml.NewDecoder(bytes.NewReader(out.Bytes()))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("encoding/xml rejects our output: %v", err)
			}
			break
		}
	}
}

func TestEncode_Escaping(t *testing.T) {
	d := &Document{Header: Header{MD: MD{Capability: CapChangeList, From: mustDT("2013-01-01"), Length: -1}}}
	d.Entries = []Entry{{Loc: "http://e/a?b=<c>&d=\"e\"'\r\n", MD: &MD{Change: Updated, Length: -1, Type: "a\"b<c&d\te\nf\rg"},
		Links: []Link{{Rel: "x", Href: "y&z", Length: -1, Pri: -1}}}}
	var out bytes.Buffer
	if err := Encode(&out, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `<loc>http://e/a?b=&lt;c&gt;&amp;d="e"'&#13;`+"\n"+`</loc>`) ||
		!strings.Contains(out.String(), `type="a&quot;b&lt;c&amp;d&#9;e&#10;f&#13;g"`) {
		t.Fatalf("escaping:\n%s", out.String())
	}
	back, err := Parse(&out, Options{Mode: Lenient})
	if err != nil {
		t.Fatal(err)
	}
	if back.Entries[0].MD.Type != d.Entries[0].MD.Type || back.Entries[0].Links[0].Href != "y&z" {
		t.Fatalf("escaped values did not survive: %+v", back.Entries[0].MD)
	}
	// Surrounding whitespace of <loc> is not part of the value.
	if back.Entries[0].Loc != strings.TrimRight(d.Entries[0].Loc, "\r\n") {
		t.Fatalf("loc %q", back.Entries[0].Loc)
	}
}

func TestEncode_Errors(t *testing.T) {
	bad := &Document{Header: Header{MD: MD{Capability: "x\x00", Length: -1}}}
	if err := Encode(&bytes.Buffer{}, bad); err == nil {
		t.Fatal("NUL character encoded")
	}
	badName := &Document{Header: Header{MD: MD{Capability: "x", Length: -1}, Ext: Extension{Attrs: []xml.Attr{{Name: xml.Name{Space: "urn:x", Local: "a b"}}}}}}
	if err := Encode(&bytes.Buffer{}, badName); err == nil {
		t.Fatal("invalid attribute name encoded")
	}
	e := NewEncoder(&bytes.Buffer{})
	if err := e.WriteEntry(&Entry{Loc: "x"}); err == nil {
		t.Fatal("WriteEntry before WriteHeader")
	}
	e = NewEncoder(failWriter{})
	_ = e.WriteHeader(&Header{MD: MD{Capability: "x", Length: -1}})
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("writer error: %v", err)
	}
	if err := e.Close(); err == nil {
		t.Fatal("Close after failure succeeded")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEncode_EntryNamespacesDeclaredLocally(t *testing.T) {
	d := &Document{Header: Header{MD: MD{Capability: CapResourceList, At: mustDT("2013"), Length: -1},
		Ext: Extension{Attrs: []xml.Attr{{Name: xml.Name{Space: "urn:root", Local: "r"}, Value: "1"}}}}}
	d.Entries = []Entry{{Loc: "http://e/a", Ext: Extension{Attrs: []xml.Attr{
		{Name: xml.Name{Space: "urn:root", Local: "x"}, Value: "1"},
		{Name: xml.Name{Space: "urn:new", Local: "y"}, Value: "2"},
		{Name: xml.Name{Space: "urn:new", Local: "z"}, Value: "3"},
		{Name: xml.Name{Space: NSXML, Local: "lang"}, Value: "en"},
	}}}}
	var out bytes.Buffer
	if err := Encode(&out, d); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, `xmlns:ns1="urn:root"`) || !strings.Contains(s, `<url ns1:x="1" xmlns:ns2="urn:new" ns2:y="2" ns2:z="3" xml:lang="en">`) {
		t.Fatalf("namespaces:\n%s", s)
	}
	back, err := Parse(&out, Options{})
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, back, d)
	}
}

func mustDT(s string) DateTime {
	d, err := ParseDateTime(s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestTokenizer_Hardening(t *testing.T) {
	pre := xmlDecl + rootOpen + notifMD
	cases := []struct {
		name string
		xml  string
		rule Rule
	}{
		{"doctype", `<!DOCTYPE urlset>` + rootOpen + `</urlset>`, RuleDTD},
		{"entity decl inside", pre + `<!ENTITY x "y"></urlset>`, RuleDTD},
		{"billion laughs", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><urlset>&lol2;</urlset>`, RuleDTD},
		{"external entity", `<!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` + rootOpen + `&xxe;</urlset>`, RuleDTD},
		{"deep nesting", pre + strings.Repeat("<x:a xmlns:x='urn:x'>", MaxDepth) + strings.Repeat("</x:a>", MaxDepth) + "</urlset>", RuleLimits},
		{"huge name", pre + "<x" + strings.Repeat("a", MaxNameBytes+1) + "/></urlset>", RuleLimits},
		{"huge text", pre + "<url><loc>" + strings.Repeat("a", MaxTokenBytes+10) + "</loc></url></urlset>", RuleLimits},
		{"huge attribute", pre + `<url xmlns:ex="urn:x" ex:a="` + strings.Repeat("a", MaxTokenBytes+10) + `"/></urlset>`, RuleLimits},
		{"too many attributes", pre + "<url" + strings.Repeat(" a=''", 1) + manyAttrs(MaxAttrs+1) + "/></urlset>", RuleLimits},
		{"xml decl late", rootOpen + `<?xml version="1.0"?></urlset>`, RuleWellFormed},
		{"encoding latin1", `<?xml version="1.0" encoding="ISO-8859-1"?>` + rootOpen + notifMD + `</urlset>`, RuleWellFormed},
		{"control char", pre + "<url><loc>a\x01</loc></url></urlset>", RuleWellFormed},
		{"surrogate ref", pre + "<url><loc>&#xD800;</loc></url></urlset>", RuleWellFormed},
		{"nul ref", pre + "<url><loc>&#0;</loc></url></urlset>", RuleWellFormed},
		{"double dash comment", pre + "<!-- a -- b --></urlset>", RuleWellFormed},
		{"duplicate attribute", xmlDecl + rootOpen + `<rs:md capability="a" capability="b"/></urlset>`, RuleWellFormed},
		{"duplicate attribute via prefixes", xmlDecl + rootOpen + `<rs:md xmlns:a="urn:x" xmlns:b="urn:x" a:c="1" b:c="2"/></urlset>`, RuleWellFormed},
		{"unterminated", pre + "<url><loc>a", RuleWellFormed},
		{"empty", "", RuleWellFormed},
		{"lt in attribute", xmlDecl + rootOpen + `<rs:md capability="a<b"/></urlset>`, RuleWellFormed},
		{"unquoted attribute", xmlDecl + rootOpen + `<rs:md capability=a/></urlset>`, RuleWellFormed},
		{"empty prefix binding", xmlDecl + rootOpen + `<rs:md xmlns:x="" capability="a"/></urlset>`, RuleNamespaces},
		{"rebinding xml", xmlDecl + rootOpen + `<rs:md xmlns:xml="urn:x" capability="a"/></urlset>`, RuleNamespaces},
		{"cdata outside root", `<![CDATA[x]]>` + rootOpen + `</urlset>`, RuleWellFormed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []Mode{Strict, Lenient} {
				_, err := Parse(strings.NewReader(c.xml), Options{Mode: mode})
				if !errors.Is(err, c.rule) {
					t.Fatalf("%s: got %v, want rule %s", mode, err, c.rule)
				}
			}
		})
	}
}

func manyAttrs(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" a")
		b.WriteString(itoa(i))
		b.WriteString("='1'")
	}
	return b.String()
}

// TestTokenizer_SmallReads feeds the decoder one byte at a time, so every
// token crosses a buffer boundary.
func TestTokenizer_SmallReads(t *testing.T) {
	for _, mode := range []Mode{Strict, Lenient} {
		want, err := Parse(strings.NewReader(foreignDoc), Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(&oneByteReader{s: foreignDoc}, Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("one-byte reads decode differently")
		}
	}
}

type oneByteReader struct {
	s string
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[r.i]
	r.i++
	return 1, nil
}
