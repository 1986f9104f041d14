package dataset

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

const nsRDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
const nsXML = "http://www.w3.org/XML/1998/namespace"

// ReadRDFXML calls fn for each triple of an RDF/XML document (in the
// default graph): node elements (rdf:Description or typed) with rdf:about,
// rdf:ID, rdf:nodeID or none, property attributes, property elements with
// rdf:resource, rdf:nodeID, rdf:datatype, xml:lang, nested node elements,
// rdf:parseType="Resource" and "Literal", and text. Containers' rdf:li is
// numbered; reification (rdf:ID on a property) and parseType="Collection"
// are not supported and refused.
func ReadRDFXML(r io.Reader, base string, fn func(Quad) error) error {
	p := &rdfxml{dec: xml.NewDecoder(r), base: base, fn: fn}
	for {
		tok, err := p.dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dataset: RDF/XML: %w", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Space == nsRDF && se.Name.Local == "RDF" {
			p.scope(se)
			if err := p.nodes(); err != nil {
				return fmt.Errorf("dataset: RDF/XML: %w", err)
			}
			return nil
		}
		if _, err := p.node(se, ""); err != nil { // a lone node element
			return fmt.Errorf("dataset: RDF/XML: %w", err)
		}
		return nil
	}
}

type rdfxml struct {
	dec   *xml.Decoder
	base  string
	lang  string
	fn    func(Quad) error
	blank int
}

// scope takes xml:base and xml:lang from an element.
func (p *rdfxml) scope(se xml.StartElement) {
	for _, a := range se.Attr {
		if a.Name.Space == nsXML && a.Name.Local == "base" {
			p.base = p.resolve(a.Value)
		}
		if a.Name.Space == nsXML && a.Name.Local == "lang" {
			p.lang = strings.ToLower(a.Value)
		}
	}
}

func (p *rdfxml) resolve(ref string) string {
	b, err := url.Parse(p.base)
	if err != nil || p.base == "" {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

func (p *rdfxml) newBlank() Term {
	p.blank++
	return Term{Kind: Blank, Value: "x" + strconv.Itoa(p.blank)}
}

func (p *rdfxml) emit(s, pr, o Term) error { return p.fn(Quad{S: s, P: pr, O: o}) }

// nodes reads node elements until the enclosing end element.
func (p *rdfxml) nodes() error {
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if _, err := p.node(t, ""); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

func iriOf(n xml.Name) string { return n.Space + n.Local }

// node reads a node element and returns its subject.
func (p *rdfxml) node(se xml.StartElement, _ string) (Term, error) {
	saveBase, saveLang := p.base, p.lang
	defer func() { p.base, p.lang = saveBase, saveLang }()
	p.scope(se)
	var subj Term
	for _, a := range se.Attr {
		if a.Name.Space != nsRDF {
			continue
		}
		switch a.Name.Local {
		case "about":
			subj = Term{Kind: IRI, Value: p.resolve(a.Value)}
		case "ID":
			subj = Term{Kind: IRI, Value: p.resolve("#" + a.Value)}
		case "nodeID":
			subj = Term{Kind: Blank, Value: "n" + a.Value}
		}
	}
	if subj.Kind == 0 {
		subj = p.newBlank()
	}
	if !(se.Name.Space == nsRDF && se.Name.Local == "Description") {
		if err := p.emit(subj, Term{Kind: IRI, Value: nsRDF + "type"}, Term{Kind: IRI, Value: iriOf(se.Name)}); err != nil {
			return subj, err
		}
	}
	for _, a := range se.Attr {
		if a.Name.Space == nsXML || a.Name.Space == "xmlns" || a.Name.Local == "xmlns" && a.Name.Space == "" {
			continue
		}
		if a.Name.Space == nsRDF {
			switch a.Name.Local {
			case "about", "ID", "nodeID":
				continue
			case "type":
				if err := p.emit(subj, Term{Kind: IRI, Value: nsRDF + "type"}, Term{Kind: IRI, Value: p.resolve(a.Value)}); err != nil {
					return subj, err
				}
				continue
			}
		}
		if a.Name.Space == "" {
			continue
		}
		if err := p.emit(subj, Term{Kind: IRI, Value: iriOf(a.Name)}, Term{Kind: Literal, Value: a.Value, Lang: p.lang}); err != nil {
			return subj, err
		}
	}
	return subj, p.properties(subj)
}

// properties reads property elements of subj until its end element.
func (p *rdfxml) properties(subj Term) error {
	li := 0
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			pred := iriOf(t.Name)
			if t.Name.Space == nsRDF && t.Name.Local == "li" {
				li++
				pred = nsRDF + "_" + strconv.Itoa(li)
			}
			if err := p.property(subj, Term{Kind: IRI, Value: pred}, t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// property reads one property element.
func (p *rdfxml) property(subj, pred Term, se xml.StartElement) error {
	saveBase, saveLang := p.base, p.lang
	defer func() { p.base, p.lang = saveBase, saveLang }()
	p.scope(se)
	var obj Term
	datatype, parseType := "", ""
	for _, a := range se.Attr {
		if a.Name.Space != nsRDF {
			continue
		}
		switch a.Name.Local {
		case "resource":
			obj = Term{Kind: IRI, Value: p.resolve(a.Value)}
		case "nodeID":
			obj = Term{Kind: Blank, Value: "n" + a.Value}
		case "datatype":
			datatype = p.resolve(a.Value)
		case "parseType":
			parseType = a.Value
		case "ID":
			return errors.New("reification (rdf:ID on a property element) is not supported")
		}
	}
	switch parseType {
	case "Resource":
		obj = p.newBlank()
		if err := p.emit(subj, pred, obj); err != nil {
			return err
		}
		return p.properties(obj)
	case "Literal":
		var b strings.Builder
		enc := xml.NewEncoder(&b)
		depth := 0
		for {
			tok, err := p.dec.Token()
			if err != nil {
				return err
			}
			if _, ok := tok.(xml.EndElement); ok && depth == 0 {
				break
			}
			switch tok.(type) {
			case xml.StartElement:
				depth++
			case xml.EndElement:
				depth--
			}
			if err := enc.EncodeToken(xml.CopyToken(tok)); err != nil {
				return err
			}
		}
		if err := enc.Flush(); err != nil {
			return err
		}
		return p.emit(subj, pred, Term{Kind: Literal, Value: b.String(), Datatype: nsRDF + "XMLLiteral"})
	case "":
	default:
		return fmt.Errorf("rdf:parseType=%q is not supported", parseType)
	}
	var text strings.Builder
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.StartElement:
			if obj.Kind != 0 {
				return fmt.Errorf("property %s has both an object attribute and a node element", pred.Value)
			}
			if obj, err = p.node(t, ""); err != nil {
				return err
			}
		case xml.EndElement:
			if obj.Kind == 0 {
				if nonLiteral(se.Attr) {
					obj = p.newBlank()
					if err := p.emit(subj, pred, obj); err != nil {
						return err
					}
					for _, a := range se.Attr {
						if a.Name.Space != "" && a.Name.Space != nsRDF && a.Name.Space != nsXML {
							if err := p.emit(obj, Term{Kind: IRI, Value: iriOf(a.Name)}, Term{Kind: Literal, Value: a.Value, Lang: p.lang}); err != nil {
								return err
							}
						}
					}
					return nil
				}
				obj = Term{Kind: Literal, Value: text.String()}
				if datatype != "" && datatype != XSDString {
					obj.Datatype = datatype
				} else if datatype == "" {
					obj.Lang = p.lang
				}
			}
			return p.emit(subj, pred, obj)
		}
	}
}

// nonLiteral reports whether an empty property element has property
// attributes, which make its object a blank node.
func nonLiteral(attrs []xml.Attr) bool {
	for _, a := range attrs {
		if a.Name.Space != "" && a.Name.Space != nsRDF && a.Name.Space != nsXML && a.Name.Space != "xmlns" {
			return true
		}
	}
	return false
}
