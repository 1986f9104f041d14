package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLine bounds one line of N-Quads or of a patch, in bytes.
const MaxLine = 1 << 20

// ErrNoStatement is returned by ParseQuad for a line that holds no
// statement: blank, or only a comment.
var ErrNoStatement = errors.New("dataset: no statement on this line")

// SyntaxError is a line that is not N-Quads, with where and why.
type SyntaxError struct {
	Line   int // 1-based; 0 when parsing a single line
	Column int // 1-based byte offset in the line
	Msg    string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("dataset: line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("dataset: column %d: %s", e.Column, e.Msg)
}

// ParseQuad reads one N-Quads (or N-Triples) statement. A blank or
// comment-only line gives ErrNoStatement; anything else that is not one
// statement gives a *SyntaxError.
func ParseQuad(line string) (Quad, error) {
	p := lineParser{s: line}
	p.space()
	if p.done() || p.peek() == '#' {
		return Quad{}, ErrNoStatement
	}
	var q Quad
	var err error
	if q.S, err = p.term("subject", IRI, Blank); err != nil {
		return q, err
	}
	if q.P, err = p.term("predicate", IRI); err != nil {
		return q, err
	}
	if q.O, err = p.term("object", IRI, Blank, Literal); err != nil {
		return q, err
	}
	if !p.done() && p.peek() != '.' {
		if q.G, err = p.term("graph label", IRI, Blank); err != nil {
			return q, err
		}
	}
	if p.done() || p.peek() != '.' {
		return q, p.fail("expected \".\" to end the statement")
	}
	p.i++
	p.space()
	if !p.done() && p.peek() != '#' {
		return q, p.fail("unexpected text after the statement")
	}
	return q, nil
}

// ReadQuads calls fn for each statement of r, an N-Quads document. An
// error names its line.
func ReadQuads(r io.Reader, fn func(Quad) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for n := 1; sc.Scan(); n++ {
		q, err := ParseQuad(cleanLine(sc.Text(), n))
		if errors.Is(err, ErrNoStatement) {
			continue
		}
		if err != nil {
			return atLine(err, n)
		}
		if err := fn(q); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("dataset: reading N-Quads: %w", err)
	}
	return nil
}

// atLine sets the line number of a *SyntaxError.
func atLine(err error, n int) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		c := *se
		c.Line = n
		return &c
	}
	return err
}

type lineParser struct {
	s string
	i int
}

func (p *lineParser) done() bool { return p.i >= len(p.s) }
func (p *lineParser) peek() byte { return p.s[p.i] }

func (p *lineParser) space() {
	for !p.done() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *lineParser) fail(format string, args ...any) error {
	return &SyntaxError{Column: p.i + 1, Msg: fmt.Sprintf(format, args...)}
}

// term reads one term of an allowed kind, then the space after it.
func (p *lineParser) term(role string, kinds ...Kind) (Term, error) {
	if p.done() {
		return Term{}, p.fail("missing %s", role)
	}
	var t Term
	var err error
	switch p.peek() {
	case '<':
		t.Kind = IRI
		t.Value, err = p.iri()
	case '_':
		t.Kind = Blank
		t.Value, err = p.blank()
	case '"':
		t.Kind = Literal
		err = p.literal(&t)
	default:
		return t, p.fail("%s: expected <IRI>, _:blank or \"literal\"", role)
	}
	if err != nil {
		return t, err
	}
	ok := false
	for _, k := range kinds {
		ok = ok || k == t.Kind
	}
	if !ok {
		return t, p.fail("%s cannot be a %s", role, kindName(t.Kind))
	}
	p.space()
	return t, nil
}

func kindName(k Kind) string {
	switch k {
	case IRI:
		return "IRI"
	case Blank:
		return "blank node"
	default:
		return "literal"
	}
}

// iri reads <...>, unescaping UCHARs.
func (p *lineParser) iri() (string, error) {
	p.i++ // <
	// no escapes, the common case: the value is the text as it is
	if v, ok := p.plain('>', "<\"{}|^`\\"); ok {
		if v == "" {
			return "", p.fail("empty IRI")
		}
		return v, nil
	}
	var b strings.Builder
	for {
		if p.done() {
			return "", p.fail("IRI not closed with \">\"")
		}
		c := p.peek()
		switch {
		case c == '>':
			p.i++
			if b.Len() == 0 {
				return "", p.fail("empty IRI")
			}
			return b.String(), nil
		case c == '\\':
			r, err := p.uchar()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		case c <= 0x20 || strings.IndexByte("<\"{}|^`", c) >= 0:
			return "", p.fail("character %q not allowed in an IRI", c)
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail("invalid UTF-8")
			}
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
}

// blank reads _:label.
func (p *lineParser) blank() (string, error) {
	if !strings.HasPrefix(p.s[p.i:], "_:") {
		return "", p.fail("expected \"_:\"")
	}
	p.i += 2
	start := p.i
	for !p.done() {
		r, size := utf8.DecodeRuneInString(p.s[p.i:])
		if r == ' ' || r == '\t' || r == utf8.RuneError || !(isPNChars(r) || r == '.') {
			break
		}
		p.i += size
	}
	// a label does not end with "."
	for p.i > start && p.s[p.i-1] == '.' {
		p.i--
	}
	if p.i == start {
		return "", p.fail("empty blank node label")
	}
	return p.s[start:p.i], nil
}

func isPNChars(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' ||
		r == 0xb7 || r >= 0xc0 && r != 0xd7 && r != 0xf7 && r <= 0x1fff && r != 0x37e || r >= 0x200c && r <= 0x200d ||
		r >= 0x203f && r <= 0x2040 || r >= 0x2070 && r <= 0x218f || r >= 0x2c00 && r <= 0x2fef || r >= 0x3001 && r <= 0xd7ff ||
		r >= 0xf900 && r <= 0xfdcf || r >= 0xfdf0 && r <= 0xfffd || r >= 0x10000 && r <= 0xeffff
}

// literal reads "..." and its ^^<datatype> or @lang.
func (p *lineParser) literal(t *Term) error {
	p.i++ // "
	if v, ok := p.plain('"', "\\\n\r"); ok {
		t.Value = v
		return p.suffix(t)
	}
	var b strings.Builder
	for {
		if p.done() {
			return p.fail("literal not closed with '\"'")
		}
		c := p.peek()
		switch c {
		case '"':
			p.i++
			t.Value = b.String()
			return p.suffix(t)
		case '\n', '\r':
			return p.fail("raw line break in a literal")
		case '\\':
			if p.i+1 >= len(p.s) {
				return p.fail("escape at end of line")
			}
			switch e := p.s[p.i+1]; e {
			case 't', 'b', 'n', 'r', 'f', '"', '\'', '\\':
				b.WriteByte(echar(e))
				p.i += 2
			default:
				r, err := p.uchar()
				if err != nil {
					return err
				}
				b.WriteRune(r)
			}
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.fail("invalid UTF-8")
			}
			b.WriteString(p.s[p.i : p.i+size])
			p.i += size
		}
	}
}

func (p *lineParser) suffix(t *Term) error {
	switch {
	case strings.HasPrefix(p.s[p.i:], "^^"):
		p.i += 2
		if p.done() || p.peek() != '<' {
			return p.fail("expected <datatype IRI> after ^^")
		}
		dt, err := p.iri()
		if err != nil {
			return err
		}
		if dt != XSDString {
			t.Datatype = dt
		}
		if dt == langString {
			return p.fail("rdf:langString needs a language tag, not a datatype")
		}
	case !p.done() && p.peek() == '@':
		p.i++
		start := p.i
		for !p.done() && (isAlpha(p.peek()) || p.i > start && (p.peek() == '-' || p.peek() >= '0' && p.peek() <= '9')) {
			p.i++
		}
		tag := p.s[start:p.i]
		if tag == "" || !isAlpha(tag[0]) || strings.HasSuffix(tag, "-") || strings.Contains(tag, "--") {
			return p.fail("bad language tag %q", tag)
		}
		t.Lang = strings.ToLower(tag)
	}
	return nil
}

// echar is the character an ECHAR escape \e stands for.
func echar(e byte) byte {
	switch e {
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return e // " ' \
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// uchar reads \uXXXX or \UXXXXXXXX.
func (p *lineParser) uchar() (rune, error) {
	if p.i+1 >= len(p.s) {
		return 0, p.fail("escape at end of line")
	}
	n := 0
	switch p.s[p.i+1] {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, p.fail("unknown escape \\%c", p.s[p.i+1])
	}
	if p.i+2+n > len(p.s) {
		return 0, p.fail("short \\%c escape", p.s[p.i+1])
	}
	v, err := strconv.ParseUint(p.s[p.i+2:p.i+2+n], 16, 32)
	if err != nil || v > utf8.MaxRune || v >= 0xd800 && v <= 0xdfff {
		return 0, p.fail("bad \\%c escape %q", p.s[p.i+1], p.s[p.i+2:p.i+2+n])
	}
	p.i += 2 + n
	return rune(v), nil
}

// plain reads up to the closing byte end when the text before it is
// valid UTF-8 holding no byte of stop and, for an IRI, no control
// character or space: then the value is that text, taken as it is. It
// moves past end only when it reports true; otherwise the caller reads
// the token the slow way from where it was.
func (p *lineParser) plain(end byte, stop string) (string, bool) {
	start := p.i
	for j := start; j < len(p.s); j++ {
		c := p.s[j]
		switch {
		case c == end:
			v := p.s[start:j]
			if !utf8.ValidString(v) {
				return "", false
			}
			p.i = j + 1
			return v, true
		case strings.IndexByte(stop, c) >= 0, end == '>' && c <= 0x20:
			return "", false
		}
	}
	return "", false
}
