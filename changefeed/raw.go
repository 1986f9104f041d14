package changefeed

import (
	"encoding/xml"
	"strconv"
)

// rawCapture serialises a foreign element subtree into the canonical form
// kept in RawElement.XML:
//
//   - every namespace used in the subtree is declared on the outermost
//     element, in order of first use, with its original prefix unless that
//     prefix is empty, reserved or already taken, in which case "ns0",
//     "ns1", ... is used; elements in no namespace are unprefixed and the
//     outermost element then carries xmlns="";
//   - attributes keep their order; text is escaped with &amp; &lt; &gt; and
//     &#13;, attribute values with &amp; &lt; &quot; &#9; &#10; &#13;;
//   - an element without content is written as <x/>; CDATA sections become
//     escaped text; comments and processing instructions are dropped.
//
// Decoding and re-encoding a canonical element yields the same bytes.
type rawCapture struct {
	decls     []nsDecl
	noNS      bool
	outerQ    []byte
	outerAttr []byte
	body      []byte
	names     []byte
	nameOff   []int
}

type nsDecl struct{ uri, prefix string }

func (c *rawCapture) prefixFor(uri string, orig []byte) string {
	switch uri {
	case "":
		c.noNS = true
		return ""
	case NSXML:
		return "xml"
	}
	for _, d := range c.decls {
		if d.uri == uri {
			return d.prefix
		}
	}
	p := ""
	if len(orig) > 0 && string(orig) != "xml" && string(orig) != "xmlns" && !c.prefixUsed(string(orig)) {
		p = string(orig)
	}
	for n := 0; p == ""; n++ {
		cand := "ns" + strconv.Itoa(n)
		if !c.prefixUsed(cand) {
			p = cand
		}
	}
	c.decls = append(c.decls, nsDecl{uri: uri, prefix: p})
	return p
}

func (c *rawCapture) prefixUsed(p string) bool {
	for _, d := range c.decls {
		if d.prefix == p {
			return true
		}
	}
	return false
}

func (c *rawCapture) appendQName(dst []byte, uri string, prefix, local []byte) []byte {
	p := c.prefixFor(uri, prefix)
	if p != "" {
		dst = append(dst, p...)
		dst = append(dst, ':')
	}
	return append(dst, local...)
}

func (c *rawCapture) appendAttrs(dst []byte, attrs []xattr) []byte {
	for i := range attrs {
		a := &attrs[i]
		dst = append(dst, ' ')
		if a.space != "" {
			dst = append(dst, c.prefixFor(a.space, a.prefix)...)
			dst = append(dst, ':')
		}
		dst = append(dst, a.local...)
		dst = append(dst, '=', '"')
		dst = appendEscAttr(dst, a.value)
		dst = append(dst, '"')
	}
	return dst
}

// capture reads the element whose start tag is the tokenizer's current token.
func (c *rawCapture) capture(t *tokenizer) (RawElement, error) {
	c.decls = c.decls[:0]
	c.noNS = false
	c.body = c.body[:0]
	c.names = c.names[:0]
	c.nameOff = c.nameOff[:0]
	name := xml.Name{Space: t.space, Local: string(t.local)}
	c.outerQ = c.appendQName(c.outerQ[:0], t.space, t.prefix, t.local)
	c.outerAttr = c.appendAttrs(c.outerAttr[:0], t.attrs)
	depth := 1
	open := false // a start tag in body awaits ">" or "/>"
	for depth > 0 {
		k, err := t.next()
		if err != nil {
			return RawElement{}, err
		}
		switch k {
		case tokStart:
			if open {
				c.body = append(c.body, '>')
			}
			depth++
			c.body = append(c.body, '<')
			off := len(c.body)
			c.body = c.appendQName(c.body, t.space, t.prefix, t.local)
			c.nameOff = append(c.nameOff, len(c.names))
			c.names = append(c.names, c.body[off:]...)
			c.body = c.appendAttrs(c.body, t.attrs)
			open = true
		case tokText:
			if open {
				c.body = append(c.body, '>')
				open = false
			}
			c.body = appendEscText(c.body, t.text)
		case tokEnd:
			depth--
			if depth == 0 {
				break
			}
			off := c.nameOff[len(c.nameOff)-1]
			if open {
				c.body = append(c.body, '/', '>')
				open = false
			} else {
				c.body = append(c.body, '<', '/')
				c.body = append(c.body, c.names[off:]...)
				c.body = append(c.body, '>')
			}
			c.names = c.names[:off]
			c.nameOff = c.nameOff[:len(c.nameOff)-1]
		}
	}
	n := 1 + len(c.outerQ) + len(c.outerAttr) + len(c.body) + len(c.outerQ) + 16
	for _, d := range c.decls {
		n += len(d.prefix) + len(d.uri) + 10
	}
	out := make([]byte, 0, n)
	out = append(out, '<')
	out = append(out, c.outerQ...)
	if c.noNS {
		out = append(out, ` xmlns=""`...)
	}
	for _, d := range c.decls {
		out = append(out, " xmlns:"...)
		out = append(out, d.prefix...)
		out = append(out, '=', '"')
		out = appendEscAttr(out, []byte(d.uri))
		out = append(out, '"')
	}
	out = append(out, c.outerAttr...)
	if len(c.body) == 0 {
		out = append(out, '/', '>')
	} else {
		out = append(out, '>')
		out = append(out, c.body...)
		out = append(out, '<', '/')
		out = append(out, c.outerQ...)
		out = append(out, '>')
	}
	return RawElement{Name: name, XML: out}, nil
}

// appendEscText escapes character data.
func appendEscText[S string | []byte](dst []byte, s S) []byte { return appendEsc(dst, s, false) }

// appendEscAttr escapes an attribute value for double quotes.
func appendEscAttr[S string | []byte](dst []byte, s S) []byte { return appendEsc(dst, s, true) }

// appendEsc escapes s for XML: &, < and CR always, > in text, and the
// double quote and whitespace characters attribute normalisation would
// change in attribute values.
func appendEsc[S string | []byte](dst []byte, s S, attr bool) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '\r':
			esc = "&#13;"
		case c == '>' && !attr:
			esc = "&gt;"
		case c == '"' && attr:
			esc = "&quot;"
		case c == '\t' && attr:
			esc = "&#9;"
		case c == '\n' && attr:
			esc = "&#10;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}
