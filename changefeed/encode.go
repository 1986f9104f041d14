package changefeed

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Encoder writes a ResourceSync document as a stream: WriteHeader once,
// WriteEntry per entry, then Close. Its memory does not depend on the number
// of entries: it reuses one buffer and flushes it to the writer as it fills.
//
// The output starts with <?xml version="1.0" encoding="UTF-8"?>; the root
// declares the Sitemap namespace as default, xmlns:rs, and a prefix ns1,
// ns2, ... for every other namespace used by the header's extension
// attributes. Extension attributes of entries in further namespaces get a
// prefix declared on the element that uses them. DateTimes are written in
// their Raw form (a DateTime with an empty Raw is absent); negative lengths
// and non-positive pri values are absent. RawElement.XML is written verbatim.
type Encoder struct {
	w      io.Writer
	buf    []byte
	state  uint8 // 0 new, 1 header written, 2 closed
	kind   Kind
	rootNS []nsDecl
	local  []nsDecl
	err    error
}

const flushAt = 32 << 10

var errEncoderState = errors.New("changefeed: encoder: WriteHeader must come first, once, and nothing after Close")

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, buf: make([]byte, 0, flushAt+4096)}
}

// Encode writes doc, header, entries and trailer, to w.
func Encode(w io.Writer, doc *Document) error {
	e := NewEncoder(w)
	if err := e.WriteHeader(&doc.Header); err != nil {
		return err
	}
	for i := range doc.Entries {
		if err := e.WriteEntry(&doc.Entries[i]); err != nil {
			return err
		}
	}
	for i := range doc.Trailer {
		e.buf = append(e.buf, doc.Trailer[i].XML...)
		e.buf = append(e.buf, '\n')
	}
	return e.Close()
}

// WriteHeader writes the XML declaration, the root start tag and the root's
// rs:ln, rs:md and extension elements.
func (e *Encoder) WriteHeader(h *Header) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 0 {
		return errEncoderState
	}
	e.state = 1
	e.kind = h.Kind
	e.rootNS = e.rootNS[:0]
	e.collectNS(h.Ext.Attrs)
	e.collectNS(h.MD.Ext)
	for i := range h.Links {
		e.collectNS(h.Links[i].Ext)
	}
	b := append(e.buf, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<"...)
	b = append(b, rootName(h.Kind)...)
	b = append(b, ` xmlns="`+NSSitemap+`" xmlns:rs="`+NSRS+`"`...)
	for _, d := range e.rootNS {
		b = append(b, " xmlns:"...)
		b = append(b, d.prefix...)
		b = append(b, `="`...)
		b = e.escAttr(b, d.uri)
		b = append(b, '"')
	}
	e.local = e.local[:0]
	b = e.extAttrs(b, h.Ext.Attrs)
	b = append(b, ">\n"...)
	for i := range h.Links {
		b = e.link(b, &h.Links[i])
		b = append(b, '\n')
	}
	b = e.md(b, &h.MD)
	b = append(b, '\n')
	for i := range h.Ext.Elements {
		b = append(b, h.Ext.Elements[i].XML...)
		b = append(b, '\n')
	}
	e.buf = b
	return e.flush(false)
}

// WriteEntry writes one <url> or <sitemap> element.
func (e *Encoder) WriteEntry(en *Entry) error {
	if e.err != nil {
		return e.err
	}
	if e.state != 1 {
		return errEncoderState
	}
	name := entryElem(e.kind)
	b := append(e.buf, '<')
	b = append(b, name...)
	e.local = e.local[:0]
	b = e.extAttrs(b, en.Ext.Attrs)
	b = append(b, '>')
	if en.Loc != "" {
		b = append(b, "<loc>"...)
		b = e.escText(b, en.Loc)
		b = append(b, "</loc>"...)
	}
	if en.LastMod.Raw != "" {
		b = append(b, "<lastmod>"...)
		b = e.escText(b, en.LastMod.Raw)
		b = append(b, "</lastmod>"...)
	}
	if en.ChangeFreq != "" {
		b = append(b, "<changefreq>"...)
		b = e.escText(b, en.ChangeFreq)
		b = append(b, "</changefreq>"...)
	}
	if en.Priority != "" {
		b = append(b, "<priority>"...)
		b = e.escText(b, en.Priority)
		b = append(b, "</priority>"...)
	}
	if en.MD != nil {
		b = e.md(b, en.MD)
	}
	for i := range en.Links {
		b = e.link(b, &en.Links[i])
	}
	for i := range en.Ext.Elements {
		b = append(b, en.Ext.Elements[i].XML...)
	}
	b = append(b, "</"...)
	b = append(b, name...)
	b = append(b, ">\n"...)
	e.buf = b
	return e.flush(false)
}

// Close writes the root end tag and flushes. It does not close the writer.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.state != 1 {
		return errEncoderState
	}
	e.state = 2
	e.buf = append(e.buf, "</"...)
	e.buf = append(e.buf, rootName(e.kind)...)
	e.buf = append(e.buf, ">\n"...)
	return e.flush(true)
}

func (e *Encoder) flush(force bool) error {
	if e.err != nil {
		return e.err
	}
	if !force && len(e.buf) < flushAt {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	if err != nil {
		e.err = fmt.Errorf("changefeed: encode: %w", err)
	}
	return e.err
}

func (e *Encoder) setErr(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("changefeed: encode: "+format, args...)
	}
}

func (e *Encoder) md(b []byte, md *MD) []byte {
	b = append(b, "<rs:md"...)
	e.local = e.local[:0]
	b = e.strAttr(b, "capability", string(md.Capability))
	b = e.strAttr(b, "change", string(md.Change))
	b = e.strAttr(b, "datetime", md.DateTime.Raw)
	b = e.strAttr(b, "from", md.From.Raw)
	b = e.strAttr(b, "until", md.Until.Raw)
	b = e.strAttr(b, "at", md.At.Raw)
	b = e.strAttr(b, "completed", md.Completed.Raw)
	b = e.strAttr(b, "hash", md.Hash)
	if md.Length >= 0 {
		b = append(b, ` length="`...)
		b = strconv.AppendInt(b, md.Length, 10)
		b = append(b, '"')
	}
	b = e.strAttr(b, "type", md.Type)
	b = e.strAttr(b, "encoding", md.Encoding)
	b = e.strAttr(b, "path", md.Path)
	b = e.extAttrs(b, md.Ext)
	return append(b, "/>"...)
}

func (e *Encoder) link(b []byte, l *Link) []byte {
	b = append(b, "<rs:ln"...)
	e.local = e.local[:0]
	b = e.strAttr(b, "rel", l.Rel)
	b = e.strAttr(b, "href", l.Href)
	b = e.strAttr(b, "modified", l.Modified.Raw)
	b = e.strAttr(b, "hash", l.Hash)
	if l.Length >= 0 {
		b = append(b, ` length="`...)
		b = strconv.AppendInt(b, l.Length, 10)
		b = append(b, '"')
	}
	b = e.strAttr(b, "type", l.Type)
	b = e.strAttr(b, "encoding", l.Encoding)
	b = e.strAttr(b, "path", l.Path)
	if l.Pri > 0 {
		b = append(b, ` pri="`...)
		b = strconv.AppendInt(b, int64(l.Pri), 10)
		b = append(b, '"')
	}
	b = e.extAttrs(b, l.Ext)
	return append(b, "/>"...)
}

func (e *Encoder) strAttr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, '=', '"')
	b = e.escAttr(b, v)
	return append(b, '"')
}

// collectNS assigns root prefixes to the namespaces of extension attributes.
func (e *Encoder) collectNS(attrs []xml.Attr) {
	for i := range attrs {
		if s := attrs[i].Name.Space; needsPrefix(s) && findNS(e.rootNS, s) == "" {
			e.rootNS = append(e.rootNS, nsDecl{uri: s, prefix: "ns" + strconv.Itoa(len(e.rootNS)+1)})
		}
	}
}

func needsPrefix(space string) bool {
	return space != "" && space != NSRS && space != NSXML
}

func findNS(decls []nsDecl, uri string) string {
	for i := range decls {
		if decls[i].uri == uri {
			return decls[i].prefix
		}
	}
	return ""
}

// extAttrs writes extension attributes, declaring prefixes for namespaces
// the root does not declare on this element.
func (e *Encoder) extAttrs(b []byte, attrs []xml.Attr) []byte {
	for i := range attrs {
		a := &attrs[i]
		if !isNCName(a.Name.Local) {
			e.setErr("extension attribute name %q is not an XML name", a.Name.Local)
			return b
		}
		b = append(b, ' ')
		switch s := a.Name.Space; {
		case s == "":
		case s == NSRS:
			b = append(b, "rs:"...)
		case s == NSXML:
			b = append(b, "xml:"...)
		default:
			p := findNS(e.rootNS, s)
			if p == "" {
				p = findNS(e.local, s)
			}
			if p == "" {
				p = "ns" + strconv.Itoa(len(e.rootNS)+len(e.local)+1)
				e.local = append(e.local, nsDecl{uri: s, prefix: p})
				b = append(b, "xmlns:"...)
				b = append(b, p...)
				b = append(b, '=', '"')
				b = e.escAttr(b, s)
				b = append(b, '"', ' ')
			}
			b = append(b, p...)
			b = append(b, ':')
		}
		b = append(b, a.Name.Local...)
		b = append(b, '=', '"')
		b = e.escAttr(b, a.Value)
		b = append(b, '"')
	}
	return b
}

func (e *Encoder) escText(b []byte, s string) []byte {
	if !validXMLString(s) {
		e.setErr("text %q has characters XML cannot carry", clipS(s))
	}
	return appendEscText(b, s)
}

func (e *Encoder) escAttr(b []byte, s string) []byte {
	if !validXMLString(s) {
		e.setErr("attribute value %q has characters XML cannot carry", clipS(s))
	}
	return appendEscAttr(b, s)
}

// validXMLString reports whether s is valid UTF-8 made of XML Chars.
func validXMLString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if charClass[c] == ccInvalid {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || !isXMLChar(r) {
			return false
		}
		i += size
	}
	return true
}

func clipS(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
