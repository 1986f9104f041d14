package dataset

import (
	"strings"
)

// Kind tells what an RDF term is.
type Kind uint8

// Term kinds.
const (
	IRI Kind = iota + 1
	Blank
	Literal
)

// XSDString is the datatype of a plain literal, left out when written.
const XSDString = "http://www.w3.org/2001/XMLSchema#string"

// langString is the datatype of a literal with a language tag.
const langString = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

// Term is an RDF term: an IRI, a blank node label, or a literal with its
// datatype or language tag. Values are unescaped.
type Term struct {
	Kind     Kind
	Value    string // the IRI, the blank node label (without "_:"), or the lexical form
	Datatype string // literals: "" for xsd:string or a language-tagged string
	Lang     string // literals: the language tag, lower-cased, without "@"
}

// Quad is an RDF statement; G is the zero Term in the default graph.
type Quad struct {
	S, P, O, G Term
}

// String writes the quad in canonical N-Quads, without the final newline:
// the same quad always gives the same line, which is how datasets compare.
func (q Quad) String() string {
	var b strings.Builder
	b.Grow(len(q.S.Value) + len(q.P.Value) + len(q.O.Value) + len(q.O.Datatype) + len(q.G.Value) + 16)
	writeTerm(&b, q.S)
	b.WriteByte(' ')
	writeTerm(&b, q.P)
	b.WriteByte(' ')
	writeTerm(&b, q.O)
	if q.G.Kind != 0 {
		b.WriteByte(' ')
		writeTerm(&b, q.G)
	}
	b.WriteString(" .")
	return b.String()
}

// String writes the term as N-Quads does.
func (t Term) String() string {
	var b strings.Builder
	writeTerm(&b, t)
	return b.String()
}

func writeTerm(b *strings.Builder, t Term) {
	switch t.Kind {
	case IRI:
		b.WriteByte('<')
		writeIRI(b, t.Value)
		b.WriteByte('>')
	case Blank:
		b.WriteString("_:")
		b.WriteString(t.Value)
	case Literal:
		b.WriteByte('"')
		writeLiteral(b, t.Value)
		b.WriteByte('"')
		switch {
		case t.Lang != "":
			b.WriteByte('@')
			b.WriteString(t.Lang)
		case t.Datatype != "" && t.Datatype != XSDString:
			b.WriteString("^^<")
			writeIRI(b, t.Datatype)
			b.WriteByte('>')
		}
	}
}

// writeIRI escapes what an IRIREF may not hold as UCHARs.
func writeIRI(b *strings.Builder, s string) {
	for _, r := range s {
		if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
			writeUCHAR(b, r)
			continue
		}
		b.WriteRune(r)
	}
}

// writeLiteral escapes as canonical N-Triples does: \" \\ \n \r, and
// other control characters as UCHARs.
func writeLiteral(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				writeUCHAR(b, r)
				continue
			}
			b.WriteRune(r)
		}
	}
}

func writeUCHAR(b *strings.Builder, r rune) {
	const hex = "0123456789ABCDEF"
	if r > 0xffff {
		b.WriteString(`\U`)
		for shift := 28; shift >= 0; shift -= 4 {
			b.WriteByte(hex[(r>>shift)&15])
		}
		return
	}
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&15])
	}
}
