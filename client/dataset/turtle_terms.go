package dataset

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Terms of Turtle: IRIs, prefixed names, strings and numbers.

func (p *turtle) iriRef() (string, error) {
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '<' {
		return "", p.fail("expected <IRI>")
	}
	lp := lineParser{s: p.s, i: p.i}
	end := strings.IndexByte(p.s[p.i:], '>')
	if end < 0 {
		return "", p.fail("IRI not closed")
	}
	lp.s = p.s[:p.i+end+1]
	v, err := p.relIRI(&lp)
	if err != nil {
		return "", err
	}
	p.i = lp.i
	return v, nil
}

// relIRI reads <...> allowing the empty relative IRI, resolved on base.
func (p *turtle) relIRI(lp *lineParser) (string, error) {
	if strings.HasPrefix(lp.s[lp.i:], "<>") {
		lp.i += 2
		return p.base, nil
	}
	v, err := lp.iri()
	if err != nil {
		return "", p.fail("bad IRI")
	}
	return p.resolve(v), nil
}

func (p *turtle) resolve(ref string) string {
	if p.base == "" {
		return ref
	}
	b, err := url.Parse(p.base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

func (p *turtle) prefixedName() (Term, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' && (isPNChars(rune(p.s[p.i])) || p.s[p.i] == '.') {
		p.i++
	}
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		p.i = start
		return Term{}, p.fail("expected a term")
	}
	ns, ok := p.prefixes[p.s[start:p.i]]
	if !ok {
		p.i = start
		return Term{}, p.fail("undeclared prefix %q", p.s[start:p.i])
	}
	p.i++
	var local strings.Builder
	for p.i < len(p.s) {
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		switch {
		case r == '\\' && p.i+1 < len(p.s):
			local.WriteByte(p.s[p.i+1])
			p.i += 2
			continue
		case r == '%' || r == ':' || isPNChars(r):
		case r == '.' && p.i+1 < len(p.s) && (isPNChars(rune(p.s[p.i+1])) || p.s[p.i+1] == ':' || p.s[p.i+1] == '%'):
		default:
			return Term{Kind: IRI, Value: ns + local.String()}, nil
		}
		local.WriteString(p.s[p.i : p.i+size])
		p.i += size
	}
	return Term{Kind: IRI, Value: ns + local.String()}, nil
}

func (p *turtle) literal() (Term, error) {
	q := p.s[p.i]
	long := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	delim := string(q)
	if long {
		delim = strings.Repeat(string(q), 3)
	}
	p.i += len(delim)
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return Term{}, p.fail("string not closed")
		}
		if strings.HasPrefix(p.s[p.i:], delim) {
			p.i += len(delim)
			break
		}
		c := p.s[p.i]
		switch {
		case c == '\\':
			lp := lineParser{s: p.s, i: p.i}
			if p.i+1 < len(p.s) && strings.IndexByte("tbnrf\"'\\", p.s[p.i+1]) >= 0 {
				b.WriteByte(echar(p.s[p.i+1]))
				p.i += 2
				continue
			}
			r, err := lp.uchar()
			if err != nil {
				return Term{}, p.fail("bad escape")
			}
			b.WriteRune(r)
			p.i = lp.i
		case !long && (c == '\n' || c == '\r'):
			return Term{}, p.fail("line break in a short string")
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	t := Term{Kind: Literal, Value: b.String()}
	lp := lineParser{s: p.s, i: p.i}
	if p.i < len(p.s) && p.s[p.i] == '@' {
		if err := lp.suffix(&t); err != nil {
			return t, p.fail("bad language tag")
		}
		p.i = lp.i
	} else if strings.HasPrefix(p.s[p.i:], "^^") {
		p.i += 2
		dt, err := p.term(false)
		if err != nil {
			return t, err
		}
		if dt.Value != XSDString {
			t.Datatype = dt.Value
		}
	}
	return t, nil
}

func (p *turtle) number() (Term, error) {
	start := p.i
	if p.s[p.i] == '+' || p.s[p.i] == '-' {
		p.i++
	}
	digits := func() {
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
	}
	digits()
	dt := "integer"
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' {
		p.i++
		digits()
		dt = "decimal"
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		digits()
		dt = "double"
	}
	lex := p.s[start:p.i]
	if strings.Trim(lex, "+-.eE") == "" {
		return Term{}, p.fail("bad number %q", lex)
	}
	return Term{Kind: Literal, Value: lex, Datatype: nsXSD + dt}, nil
}
