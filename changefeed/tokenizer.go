package changefeed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// The tokenizer is a streaming, pull XML 1.0 tokenizer for the subset
// Sitemaps use: elements, attributes, character data, CDATA sections,
// comments and processing instructions, namespaces, the five predefined
// entities and numeric character references. DOCTYPE and every other markup
// declaration are rejected. It reads UTF-8 only, checks that every character
// is an XML Char, enforces the limits of limits.go and never allocates per
// token once its buffers have grown.

type tokKind uint8

const (
	tokStart tokKind = iota + 1
	tokEnd
	tokText
	tokEOF
)

// NSXML is the namespace bound to the reserved prefix "xml".
const NSXML = "http://www.w3.org/XML/1998/namespace"

const nsXMLNS = "http://www.w3.org/2000/xmlns/"

type xattr struct {
	space  string // resolved namespace; "" when unprefixed
	prefix []byte
	local  []byte
	value  []byte
	vs, ve int // value offsets into the attribute scratch while scanning
	inBuf  bool
}

type nsBinding struct {
	prefix string
	uri    string
	depth  int
}

type tokenizer struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	consumed int64 // bytes dropped from the front of buf
	total    int64 // bytes read from r
	maxBytes int64

	line    int // line number of buf[linePos]
	linePos int

	// current token
	kind    tokKind
	tokPos  int
	space   string
	prefix  []byte
	local   []byte
	attrs   []xattr
	text    []byte
	scratch []byte // unescaped text
	ascr    []byte // unescaped attribute values

	names      []byte // qualified names of open elements, concatenated
	nameOff    []int
	depth      int
	ns         []nsBinding
	pendingEnd bool
	rootDone   bool
	sawRoot    bool
	sawToken   bool
	err        error
}

var errNeedMore = errors.New("need more input")

func newTokenizer(r io.Reader, maxBytes int64) *tokenizer {
	size := 32 << 10
	// a small in-memory document (a typical notification) needs no 32 KiB
	// buffer; the buffer still grows when a token needs it
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < size {
		size = max(l.Len()+1, 512)
	}
	return &tokenizer{r: r, buf: make([]byte, size), maxBytes: maxBytes, line: 1}
}

// lineOf returns the line number of buf[p], p >= linePos.
func (t *tokenizer) lineOf(p int) int {
	if p > t.linePos {
		t.line += bytes.Count(t.buf[t.linePos:p], nl)
		t.linePos = p
	}
	return t.line
}

var nl = []byte{'\n'}

// tokLine is the line where the current token starts.
func (t *tokenizer) tokLine() int { return t.lineOf(t.tokPos) }

func (t *tokenizer) fail(rule Rule, format string, args ...any) error {
	if t.err == nil {
		t.err = verr(rule, -1, t.lineOf(max(t.tokPos, t.linePos)), fmt.Sprintf(format, args...))
	}
	return t.err
}

// fill makes room and reads more input. It keeps buf[pos:end].
func (t *tokenizer) fill() error {
	if t.eof {
		return t.fail(RuleWellFormed, "unexpected end of input")
	}
	if t.pos > 0 {
		t.lineOf(t.pos)
		n := copy(t.buf, t.buf[t.pos:t.end])
		t.consumed += int64(t.pos)
		t.linePos -= t.pos
		t.tokPos -= t.pos
		t.end = n
		t.pos = 0
	}
	if t.end == len(t.buf) {
		if len(t.buf) >= MaxTokenBytes+4096 {
			return t.fail(RuleLimits, "token longer than %d bytes", MaxTokenBytes)
		}
		nb := make([]byte, min(2*len(t.buf), MaxTokenBytes+4096))
		copy(nb, t.buf[:t.end])
		t.buf = nb
	}
	for tries := 0; ; tries++ {
		n, err := t.r.Read(t.buf[t.end:])
		if n < 0 || n > len(t.buf)-t.end {
			return t.fail(RuleWellFormed, "reader returned invalid count %d", n)
		}
		t.end += n
		t.total += int64(n)
		if t.total > t.maxBytes {
			return t.fail(RuleMaxBytes, "document exceeds %d bytes", t.maxBytes)
		}
		if err == io.EOF {
			t.eof = true
			return nil
		}
		if err != nil {
			if t.err == nil {
				t.err = fmt.Errorf("changefeed: read: %w", err)
			}
			return t.err
		}
		if n > 0 {
			return nil
		}
		if tries > 100 {
			t.err = fmt.Errorf("changefeed: read: %w", io.ErrNoProgress)
			return t.err
		}
	}
}

// next reads the next token. Whitespace outside the root element, comments
// and processing instructions are skipped.
func (t *tokenizer) next() (tokKind, error) {
	if t.err != nil {
		return 0, t.err
	}
	if t.pendingEnd {
		t.pendingEnd = false
		t.popElement()
		t.kind = tokEnd
		return tokEnd, nil
	}
	for {
		t.tokPos = t.pos
		k, err := t.scan()
		if err == errNeedMore {
			if t.eof && t.pos == t.end && t.depth == 0 {
				if !t.sawRoot {
					return 0, t.fail(RuleWellFormed, "no root element")
				}
				t.kind = tokEOF
				return tokEOF, nil
			}
			if err := t.fill(); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		if t.pos-t.tokPos > MaxTokenBytes {
			return 0, t.fail(RuleLimits, "token longer than %d bytes", MaxTokenBytes)
		}
		if k == 0 { // skipped construct
			continue
		}
		t.kind = k
		return k, nil
	}
}

// scan tries to read one token at pos. It returns errNeedMore when the
// buffer ends inside the token, kind 0 for skipped constructs.
func (t *tokenizer) scan() (tokKind, error) {
	b := t.buf[t.pos:t.end]
	if len(b) == 0 {
		return 0, errNeedMore
	}
	if b[0] != '<' {
		return t.scanText(b)
	}
	if len(b) < 2 {
		return 0, errNeedMore
	}
	switch b[1] {
	case '/':
		return t.scanEnd(b)
	case '?':
		return t.scanPI(b)
	case '!':
		return t.scanBang(b)
	}
	return t.scanStart(b)
}

func (t *tokenizer) scanText(b []byte) (tokKind, error) {
	if t.consumed == 0 && t.pos == 0 && !t.sawToken && len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		t.pos += 3 // byte order mark
		return 0, nil
	}
	i := bytes.IndexByte(b, '<')
	if i < 0 {
		if !t.eof {
			if len(b) > MaxTokenBytes {
				return 0, t.fail(RuleLimits, "text longer than %d bytes", MaxTokenBytes)
			}
			return 0, errNeedMore
		}
		i = len(b)
	}
	raw := b[:i]
	if t.depth == 0 {
		for _, c := range raw {
			if !isXMLSpace(c) {
				if t.rootDone {
					return 0, t.fail(RuleWellFormed, "text after the root element")
				}
				return 0, t.fail(RuleWellFormed, "text before the root element")
			}
		}
		t.sawToken = true
		t.pos += i
		return 0, nil
	}
	if bad := checkChars(raw); bad >= 0 {
		return 0, t.fail(RuleWellFormed, "invalid character or UTF-8 in text")
	}
	if bytes.IndexByte(raw, '&') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		t.text = raw
	} else {
		var bad int
		t.scratch, bad = unescape(t.scratch[:0], raw, false)
		if bad >= 0 {
			return 0, t.fail(RuleWellFormed, "invalid or unknown entity reference in text")
		}
		t.text = t.scratch
	}
	t.pos += i
	return tokText, nil
}

// scanName reads a name at b[i:] and returns its end.
func scanName(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if c < 0x80 {
			if charClass[c]&ccNameChar == 0 {
				return i
			}
			i++
			continue
		}
		if isXMLSpace(c) {
			return i
		}
		i++ // validated by isName afterwards
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isXMLSpace(b[i]) {
		i++
	}
	return i
}

// splitQName splits a qualified name; ok is false for an empty prefix or
// local part or more than one colon.
func splitQName(q []byte) (prefix, local []byte, ok bool) {
	c := bytes.IndexByte(q, ':')
	if c < 0 {
		return nil, q, true
	}
	if c == 0 || c == len(q)-1 || bytes.IndexByte(q[c+1:], ':') >= 0 ||
		q[c+1] < 0x80 && charClass[q[c+1]]&ccNameOK == 0 {
		return nil, nil, false
	}
	return q[:c], q[c+1:], true
}

func (t *tokenizer) scanEnd(b []byte) (tokKind, error) {
	j := scanName(b, 2)
	if j == len(b) {
		return 0, errNeedMore
	}
	name := b[2:j]
	j = skipSpace(b, j)
	if j == len(b) {
		return 0, errNeedMore
	}
	if b[j] != '>' {
		return 0, t.fail(RuleWellFormed, "malformed end tag")
	}
	if t.depth == 0 {
		return 0, t.fail(RuleWellFormed, "end tag </%s> without start tag", clip(name))
	}
	open := t.names[t.nameOff[t.depth-1]:]
	if !bytes.Equal(open, name) {
		return 0, t.fail(RuleWellFormed, "element <%s> closed by </%s>", clip(open), clip(name))
	}
	t.pos += j + 1
	t.popElement()
	return tokEnd, nil
}

// popElement closes the innermost element: it sets the end token's name and
// drops the element's namespace bindings.
func (t *tokenizer) popElement() {
	off := t.nameOff[t.depth-1]
	q := t.names[off:]
	t.prefix, t.local, _ = splitQName(q)
	t.space = t.resolve(t.prefix, true)
	for len(t.ns) > 0 && t.ns[len(t.ns)-1].depth == t.depth {
		t.ns = t.ns[:len(t.ns)-1]
	}
	t.names = t.names[:off]
	t.nameOff = t.nameOff[:t.depth-1]
	t.depth--
	if t.depth == 0 {
		t.rootDone = true
	}
}
