package dataset

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

const nsXSD = "http://www.w3.org/2001/XMLSchema#"

// ReadTurtle calls fn for each quad of a Turtle or TriG document (Turtle
// is TriG without graph blocks): @prefix/@base and their SPARQL forms,
// prefixed names, "a", ";" and "," lists, [ ] blank nodes, ( )
// collections, the four string forms with @lang or ^^datatype, numbers
// and booleans, and TriG's { } graph blocks with an optional GRAPH
// keyword. Errors name the line.
func ReadTurtle(r io.Reader, base string, fn func(Quad) error) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("dataset: Turtle: %w", err)
	}
	if !utf8.Valid(b) {
		return fmt.Errorf("dataset: Turtle: invalid UTF-8")
	}
	p := &turtle{s: string(b), base: base, prefixes: map[string]string{}, fn: fn}
	return p.document()
}

type turtle struct {
	s        string
	i        int
	base     string
	prefixes map[string]string
	graph    Term
	fn       func(Quad) error
	blank    int
}

func (p *turtle) fail(format string, args ...any) error {
	line := 1 + strings.Count(p.s[:min(p.i, len(p.s))], "\n")
	return &SyntaxError{Line: line, Column: p.i - strings.LastIndexByte(p.s[:min(p.i, len(p.s))], '\n'), Msg: "Turtle: " + fmt.Sprintf(format, args...)}
}

func (p *turtle) ws() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *turtle) eat(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *turtle) keyword(k string) bool {
	p.ws()
	if len(p.s)-p.i >= len(k) && strings.EqualFold(p.s[p.i:p.i+len(k)], k) {
		end := p.i + len(k)
		if end == len(p.s) || !isPNChars(rune(p.s[end])) && p.s[end] != ':' {
			p.i = end
			return true
		}
	}
	return false
}

func (p *turtle) document() error {
	for {
		p.ws()
		if p.i >= len(p.s) {
			return nil
		}
		if err := p.statement(); err != nil {
			return err
		}
	}
}

func (p *turtle) statement() error {
	switch {
	case p.keyword("@prefix"):
		return p.prefix(false)
	case p.keyword("PREFIX"):
		return p.prefix(true)
	case p.keyword("@base"):
		return p.baseDirective(false)
	case p.keyword("BASE"):
		return p.baseDirective(true)
	case p.keyword("GRAPH"):
		g, err := p.term(false)
		if err != nil {
			return err
		}
		return p.block(g)
	case p.eat('{'):
		p.i--
		return p.block(Term{})
	}
	subj, err := p.subject()
	if err != nil {
		return err
	}
	if p.eat('{') { // a TriG graph block named by subj
		p.i--
		return p.block(subj)
	}
	return p.triplesRest(subj)
}

// triplesRest reads the predicate-object list after subj and the ".".
func (p *turtle) triplesRest(subj Term) error {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '.' && subj.Kind == Blank { // [ ... ] .
		p.i++
		return nil
	}
	if err := p.predicateObjects(subj); err != nil {
		return err
	}
	if !p.eat('.') {
		if p.eat('}') {
			p.i--
			return nil
		}
		return p.fail("expected \".\"")
	}
	return nil
}

// block reads { triples } in graph g.
func (p *turtle) block(g Term) error {
	if !p.eat('{') {
		return p.fail("expected \"{\"")
	}
	saved := p.graph
	p.graph = g
	defer func() { p.graph = saved }()
	for {
		if p.eat('}') {
			return nil
		}
		if p.ws(); p.i >= len(p.s) {
			return p.fail("graph block not closed")
		}
		subj, err := p.subject()
		if err != nil {
			return err
		}
		if err := p.triplesRest(subj); err != nil {
			return err
		}
	}
}

func (p *turtle) subject() (Term, error) {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '[' {
		return p.blankPropertyList()
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		return p.collection()
	}
	return p.term(false)
}

func (p *turtle) predicateObjects(subj Term) error {
	for {
		var pred Term
		if p.keyword("a") {
			pred = Term{Kind: IRI, Value: nsRDF + "type"}
		} else {
			var err error
			if pred, err = p.term(false); err != nil {
				return err
			}
			if pred.Kind != IRI {
				return p.fail("a predicate must be an IRI")
			}
		}
		for {
			obj, err := p.object()
			if err != nil {
				return err
			}
			if err := p.fn(Quad{S: subj, P: pred, O: obj, G: p.graph}); err != nil {
				return err
			}
			if !p.eat(',') {
				break
			}
		}
		if !p.eat(';') {
			return nil
		}
		for p.eat(';') {
		}
		p.ws()
		if p.i >= len(p.s) || strings.IndexByte(".]}", p.s[p.i]) >= 0 {
			return nil
		}
	}
}

func (p *turtle) object() (Term, error) {
	p.ws()
	if p.i < len(p.s) {
		switch p.s[p.i] {
		case '[':
			return p.blankPropertyList()
		case '(':
			return p.collection()
		}
	}
	return p.term(true)
}

func (p *turtle) newBlank() Term {
	p.blank++
	return Term{Kind: Blank, Value: "t" + strconv.Itoa(p.blank)}
}

func (p *turtle) blankPropertyList() (Term, error) {
	p.i++ // [
	b := p.newBlank()
	if p.eat(']') {
		return b, nil
	}
	if err := p.predicateObjects(b); err != nil {
		return b, err
	}
	if !p.eat(']') {
		return b, p.fail("expected \"]\"")
	}
	return b, nil
}

func (p *turtle) collection() (Term, error) {
	p.i++ // (
	first, rest := Term{Kind: IRI, Value: nsRDF + "first"}, Term{Kind: IRI, Value: nsRDF + "rest"}
	head := Term{Kind: IRI, Value: nsRDF + "nil"}
	var prev Term
	for !p.eat(')') {
		if p.ws(); p.i >= len(p.s) {
			return head, p.fail("collection not closed")
		}
		o, err := p.object()
		if err != nil {
			return head, err
		}
		node := p.newBlank()
		if prev.Kind == 0 {
			head = node
		} else if err := p.fn(Quad{S: prev, P: rest, O: node, G: p.graph}); err != nil {
			return head, err
		}
		if err := p.fn(Quad{S: node, P: first, O: o, G: p.graph}); err != nil {
			return head, err
		}
		prev = node
	}
	if prev.Kind != 0 {
		if err := p.fn(Quad{S: prev, P: rest, O: Term{Kind: IRI, Value: nsRDF + "nil"}, G: p.graph}); err != nil {
			return head, err
		}
	}
	return head, nil
}

// term reads an IRI, prefixed name, blank node label or (when literals)
// a literal.
func (p *turtle) term(literals bool) (Term, error) {
	p.ws()
	if p.i >= len(p.s) {
		return Term{}, p.fail("unexpected end of document")
	}
	c := p.s[p.i]
	switch {
	case c == '<':
		v, err := p.iriRef()
		return Term{Kind: IRI, Value: v}, err
	case c == '_' && strings.HasPrefix(p.s[p.i:], "_:"):
		lp := lineParser{s: p.s, i: p.i}
		v, err := lp.blank()
		p.i = lp.i
		if err != nil {
			return Term{}, p.fail("bad blank node label")
		}
		return Term{Kind: Blank, Value: v}, nil
	case literals && (c == '"' || c == '\''):
		return p.literal()
	case literals && (c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9'):
		return p.number()
	}
	for _, b := range []string{"true", "false"} {
		if literals && p.keyword(b) {
			return Term{Kind: Literal, Value: b, Datatype: nsXSD + "boolean"}, nil
		}
	}
	return p.prefixedName()
}

// prefix reads the rest of @prefix (with its ".") or PREFIX.
func (p *turtle) prefix(sparql bool) error {
	p.ws()
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' {
		p.i++
	}
	name := strings.TrimSpace(p.s[start:p.i])
	p.i++
	iri, err := p.iriRef()
	if err != nil {
		return err
	}
	p.prefixes[name] = iri
	if !sparql && !p.eat('.') {
		return p.fail("expected \".\" after @prefix")
	}
	return nil
}

// baseDirective reads the rest of @base (with its ".") or BASE.
func (p *turtle) baseDirective(sparql bool) error {
	iri, err := p.iriRef()
	if err != nil {
		return err
	}
	p.base = iri
	if !sparql && !p.eat('.') {
		return p.fail("expected \".\" after @base")
	}
	return nil
}
