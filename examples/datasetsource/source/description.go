package source

import (
	"bytes"
	"encoding/xml"
	"strings"

	"github.com/rshub/rshub/client/dataset"
)

// Namespaces of the dataset description (VoID, as Timbuctoo reads it).
const (
	dctermsNS = "http://purl.org/dc/terms/"
	voidNS    = "http://rdfs.org/ns/void#"
	foafNS    = "http://xmlns.com/foaf/0.1/"
	rdfNS     = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	// commonMark is the datatype Timbuctoo gives a Markdown description.
	commonMark = "http://spec.commonmark.org/0.28/"
)

// Media types of the documents the Source serves.
const (
	MediaTypeRDFXML   = "application/rdf+xml"
	MediaTypeNTriples = "application/n-triples"
	MediaTypeNQuads   = "application/n-quads"
)

// Description is what the dataset description says about the dataset.
type Description struct {
	Title             string // dcterms:title of the dataset
	Description       string // dcterms:description
	RightsHolder      string // dcterms:rightsHolder: schema:name
	RightsHolderEmail string // dcterms:rightsHolder: schema:email
	Contact           string // schema:ContactPoint: schema:name
	ContactEmail      string // schema:ContactPoint: schema:email
	License           string // dcterms:license, an IRI
	ProvenanceTitle   string // dcterms:provenance: dcterms:title
	Provenance        string // dcterms:provenance: dcterms:description, Markdown
}

// withDefaults fills the fields d leaves empty.
func (d Description) withDefaults() Description {
	def := func(v *string, s string) {
		if *v == "" {
			*v = s
		}
	}
	def(&d.Title, "Clusius correspondence (rshub example dataset)")
	def(&d.Description, "Places, people and letters around Carolus Clusius, edited at random by the rshub example dataset Source.")
	def(&d.RightsHolder, "rshub examples")
	def(&d.RightsHolderEmail, "rights.holder@example.org")
	def(&d.Contact, "Contact Person")
	def(&d.ContactEmail, "contact.person@example.org")
	def(&d.License, "https://creativecommons.org/publicdomain/zero/1.0/")
	def(&d.ProvenanceTitle, "Generated")
	def(&d.Provenance, "Made by `examples/datasetsource`: an initial dataset, then random additions and retractions, each published as an [N-Quads Unified Diff](https://timbuctoo.huygens.knaw.nl/).")
	return d
}

// descriptionTriples returns the description of the dataset whose
// subject is about (the Capability List URL).
func descriptionTriples(about string, d Description) []dataset.Quad {
	rh, cp, pv := iri(about+"#rightsHolder"), iri(about+"#contact"), iri(about+"#provenance")
	ds := iri(about)
	t := func(s dataset.Term, p string, o dataset.Term) dataset.Quad {
		return dataset.Quad{S: s, P: iri(p), O: o}
	}
	s := func(v string) dataset.Term { return lit(v, "", "") }
	return []dataset.Quad{
		t(ds, rdfNS+"type", iri(voidNS+"Dataset")),
		t(ds, dctermsNS+"title", s(d.Title)),
		t(ds, dctermsNS+"description", s(d.Description)),
		t(ds, dctermsNS+"rightsHolder", rh),
		t(rh, schemaNS+"name", s(d.RightsHolder)),
		t(rh, schemaNS+"email", s(d.RightsHolderEmail)),
		t(ds, schemaNS+"ContactPoint", cp),
		t(cp, schemaNS+"name", s(d.Contact)),
		t(cp, schemaNS+"email", s(d.ContactEmail)),
		t(ds, dctermsNS+"license", iri(d.License)),
		t(ds, dctermsNS+"provenance", pv),
		t(pv, dctermsNS+"title", s(d.ProvenanceTitle)),
		t(pv, dctermsNS+"description", lit(d.Provenance, commonMark, "")),
	}
}

// nTriples renders triples as sorted canonical N-Triples.
func nTriples(triples []dataset.Quad) []byte {
	var st dataset.Store
	for _, q := range triples {
		st.Add(q)
	}
	var b bytes.Buffer
	_ = st.Export(&b) // a bytes.Buffer does not fail
	return b.Bytes()
}

// rdfXML renders the description as RDF/XML, nested the way Timbuctoo's
// documentation shows it.
func rdfXML(about string, d Description) []byte {
	var b strings.Builder
	esc := func(s string) string {
		var e bytes.Buffer
		_ = xml.EscapeText(&e, []byte(s))
		return e.String()
	}
	node := func(indent, subject string, props ...string) string {
		return indent + `<rdf:Description rdf:about="` + esc(subject) + `">` + "\n" + strings.Join(props, "") + indent + "</rdf:Description>\n"
	}
	text := func(indent, prop, v string) string {
		return indent + "<" + prop + ">" + esc(v) + "</" + prop + ">\n"
	}
	nested := func(indent, prop, inner string) string {
		return indent + "<" + prop + ">\n" + inner + indent + "</" + prop + ">\n"
	}
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<rdf:RDF xmlns:rdf="` + rdfNS + `"` + "\n" +
		`         xmlns:dc="` + dctermsNS + `"` + "\n" +
		`         xmlns:foaf="` + foafNS + `"` + "\n" +
		`         xmlns:void="` + voidNS + `"` + "\n" +
		`         xmlns:schema="` + schemaNS + `">` + "\n")
	const i1, i2, i3, i4 = "  ", "    ", "      ", "        "
	b.WriteString(node(i1, about,
		i2+`<rdf:type rdf:resource="`+voidNS+`Dataset"/>`+"\n",
		text(i2, "dc:title", d.Title),
		text(i2, "dc:description", d.Description),
		nested(i2, "dc:rightsHolder", node(i3, about+"#rightsHolder", text(i4, "schema:name", d.RightsHolder), text(i4, "schema:email", d.RightsHolderEmail))),
		nested(i2, "schema:ContactPoint", node(i3, about+"#contact", text(i4, "schema:name", d.Contact), text(i4, "schema:email", d.ContactEmail))),
		i2+`<dc:license rdf:resource="`+esc(d.License)+`"/>`+"\n",
		nested(i2, "dc:provenance", node(i3, about+"#provenance",
			text(i4, "dc:title", d.ProvenanceTitle),
			i4+`<dc:description rdf:datatype="`+commonMark+`">`+esc(d.Provenance)+"</dc:description>\n")),
	))
	b.WriteString("</rdf:RDF>\n")
	return []byte(b.String())
}
