package dataset

import (
	"slices"
	"strings"
	"testing"
)

// seedDescription is the description from the seed (Timbuctoo's
// documentation), as RDF/XML.
const seedDescription = `<?xml version="1.0" encoding="utf-8" ?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:dc="http://purl.org/dc/terms/"
         xmlns:foaf="http://xmlns.com/foaf/0.1/"
         xmlns:schema="http://schema.org/">
  <rdf:Description rdf:about="http://example.org/dataset">
    <dc:title>Data set title</dc:title>
    <dc:description>Short description of the data set</dc:description>
    <foaf:depiction>https://example.org/2TBI.png</foaf:depiction>
    <dc:rightsHolder>
      <rdf:Description rdf:about="http://example.org/rightsHolder">
        <schema:name>Rights Holder</schema:name>
      </rdf:Description>
    </dc:rightsHolder>
    <dc:license rdf:resource="https://creativecommons.org/publicdomain/zero/1.0/"/>
    <dc:provenance>
      <rdf:Description rdf:about="http://example.org/provenance">
        <dc:title>Provenance title</dc:title>
        <dc:description rdf:datatype="http://spec.commonmark.org/0.28/">Provenance, [markdown](x)</dc:description>
      </rdf:Description>
    </dc:provenance>
  </rdf:Description>
</rdf:RDF>`

func parseAll(t *testing.T, doc, mediaType, base string) []string {
	t.Helper()
	var out []string
	if err := ParseRDF(strings.NewReader(doc), mediaType, base, func(q Quad) error { out = append(out, q.String()); return nil }); err != nil {
		t.Fatalf("%s: %v", mediaType, err)
	}
	slices.Sort(out)
	return out
}

func TestReadRDFXML_SeedDescription(t *testing.T) {
	got := parseAll(t, seedDescription, MediaRDFXML, "")
	for _, want := range []string{
		`<http://example.org/dataset> <http://purl.org/dc/terms/title> "Data set title" .`,
		`<http://example.org/dataset> <http://purl.org/dc/terms/rightsHolder> <http://example.org/rightsHolder> .`,
		`<http://example.org/dataset> <http://purl.org/dc/terms/license> <https://creativecommons.org/publicdomain/zero/1.0/> .`,
		`<http://example.org/provenance> <http://purl.org/dc/terms/description> "Provenance, [markdown](x)"^^<http://spec.commonmark.org/0.28/> .`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 9 {
		t.Errorf("%d triples, want 9:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// The same small dataset in every format reads to the same quads.
func TestParseRDF_FormatsAgree(t *testing.T) {
	want := []string{
		`<http://ex.org/a> <http://purl.org/dc/terms/title> "Titel"@nl .`,
		`<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/T> .`,
		`<http://ex.org/a> <http://ex.org/n> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .`,
	}
	docs := map[string]string{
		MediaNTriples: strings.Join(want, "\n"),
		MediaTurtle: `@prefix dc: <http://purl.org/dc/terms/> . @base <http://ex.org/> .
			<a> a <T> ; dc:title "Titel"@nl ; <n> 42 .`,
		MediaTriG: `PREFIX ex: <http://ex.org/>
			{ ex:a a ex:T ; <http://purl.org/dc/terms/title> """Titel"""@nl . ex:a ex:n 42 }`,
		MediaRDFXML: `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dc="http://purl.org/dc/terms/" xmlns:ex="http://ex.org/">
			<ex:T rdf:about="http://ex.org/a" dc:title="Titel" xml:lang="nl"><ex:n rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">42</ex:n></ex:T></rdf:RDF>`,
		MediaJSONLD: `{"@context": {"dc": "http://purl.org/dc/terms/", "ex": "http://ex.org/"},
			"@id": "ex:a", "@type": "ex:T", "dc:title": {"@value": "Titel", "@language": "nl"}, "ex:n": 42}`,
	}
	slices.Sort(want)
	for mt, doc := range docs {
		if got := parseAll(t, doc, mt, "http://ex.org/"); !slices.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant\n%s", mt, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestReadTurtle_BlankNodesCollectionsAndGraphs(t *testing.T) {
	doc := `@prefix : <http://ex.org/> .
# a comment
:s :p [ :q "x" ; :r ( 1 2 ) ] , _:b1 .
_:b1 :p "it's"^^<http://ex.org/dt> .
:g { :s :p true . }
GRAPH :h { :s :p -1.5e3 }`
	got := parseAll(t, doc, MediaTurtle, "")
	if len(got) != 11 {
		t.Fatalf("%d quads:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, want := range []string{
		`<http://ex.org/s> <http://ex.org/p> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> <http://ex.org/g> .`,
		`<http://ex.org/s> <http://ex.org/p> "-1.5e3"^^<http://www.w3.org/2001/XMLSchema#double> <http://ex.org/h> .`,
		`_:b1 <http://ex.org/p> "it's"^^<http://ex.org/dt> .`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s", want)
		}
	}
	if err := ReadTurtle(strings.NewReader("@prefix : <http://ex.org/> .\n:s :p\n  nope:x ."), "", func(Quad) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("undeclared prefix: %v, want an error naming line 3", err)
	}
}

func TestMediaType_DeclaredTypeOverridesExtension(t *testing.T) {
	cases := []struct{ loc, declared, want string }{
		{"http://x/d.nq", "", MediaNQuads},
		{"http://x/d.ttl?v=1", "", MediaTurtle},
		{"http://x/d.nq", "text/turtle; charset=utf-8", MediaTurtle},
		{"http://x/d.rdf", "application/octet-stream", MediaRDFXML},
		{"http://x/1.nqud", "", MediaTypePatch},
		{"http://x/patch", MediaTypePatch, MediaTypePatch},
		{"http://x/unknown", "", ""},
	}
	for _, c := range cases {
		if got := MediaType(c.loc, c.declared); got != c.want {
			t.Errorf("MediaType(%q, %q) = %q, want %q", c.loc, c.declared, got, c.want)
		}
	}
}

func TestTitle_PrefersTheDatasetOverNestedNodes(t *testing.T) {
	var quads []Quad
	_ = ParseRDF(strings.NewReader(seedDescription), MediaRDFXML, "", func(q Quad) error { quads = append(quads, q); return nil })
	if got := Title(quads); got != "Data set title" {
		t.Fatalf("Title = %q", got)
	}
	dc11 := []Quad{{S: iri("http://x/d"), P: iri("http://purl.org/dc/elements/1.1/title"), O: Term{Kind: Literal, Value: "Old style"}}}
	if got := Title(dc11); got != "Old style" {
		t.Fatalf("dc:title: %q", got)
	}
}
