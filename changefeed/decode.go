package changefeed

import (
	"encoding/xml"
	"fmt"
	"io"
)

// Decoder reads a ResourceSync document as a stream: Header first, then one
// entry per call to Next. Each entry is validated as it streams, so a
// document of any length is checked in memory bounded by its largest entry.
// After the first error every call returns that error.
type Decoder struct {
	t       *tokenizer
	opt     Options
	v       validator
	hdr     *Header
	err     error
	pending bool // the current token is the start tag of an entry
	done    bool // the root element has ended
	n       int
	trailer []RawElement
	tbuf    []byte
	rc      rawCapture
}

// NewDecoder returns a decoder reading from r. Limits in opt that are zero
// take their defaults.
func NewDecoder(r io.Reader, opt Options) *Decoder {
	opt = opt.normalized()
	d := &Decoder{t: newTokenizer(r, opt.MaxBytes), opt: opt}
	d.v.init(opt, false)
	return d
}

// Header reads the document up to its first entry and returns the root
// element's data. The root rs:md and rs:ln are validated.
func (d *Decoder) Header() (*Header, error) {
	if d.hdr == nil && d.err == nil {
		d.err = d.readHeader()
	}
	if d.err != nil {
		return nil, d.err
	}
	return d.hdr, nil
}

// Next returns the next entry, validated, or io.EOF after the last one.
func (d *Decoder) Next() (*Entry, error) {
	e := new(Entry)
	if err := d.nextInto(e); err != nil {
		return nil, err
	}
	return e, nil
}

// Trailer returns extension elements found at root level after the first
// entry. It is complete once Next has returned io.EOF.
func (d *Decoder) Trailer() []RawElement { return d.trailer }

// Parse decodes and validates a whole document.
func Parse(r io.Reader, opt Options) (*Document, error) {
	d := NewDecoder(r, opt)
	h, err := d.Header()
	if err != nil {
		return nil, err
	}
	doc := &Document{Header: *h}
	for {
		doc.Entries = append(doc.Entries, Entry{})
		err := d.nextInto(&doc.Entries[len(doc.Entries)-1])
		if err == io.EOF {
			doc.Entries = doc.Entries[:len(doc.Entries)-1]
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(doc.Entries) == 0 {
		doc.Entries = nil
	}
	doc.Trailer = d.trailer
	return doc, nil
}

func (d *Decoder) fail(rule Rule, entry int, format string, args ...any) error {
	return verr(rule, entry, d.t.tokLine(), fmt.Sprintf(format, args...))
}

func (d *Decoder) entryName() string {
	if d.hdr != nil && d.hdr.Kind == SitemapIndex {
		return "sitemap"
	}
	return "url"
}

func (d *Decoder) readHeader() error {
	t := d.t
	k, err := t.next()
	if err != nil {
		return err
	}
	if k != tokStart {
		return d.fail(RuleWellFormed, -1, "no root element")
	}
	h := &Header{}
	switch string(t.local) {
	case "urlset":
		h.Kind = URLSet
	case "sitemapindex":
		h.Kind = SitemapIndex
	default:
		return d.fail(RuleStructure, -1, "root element <%s> is neither <urlset> nor <sitemapindex>", clip(t.local))
	}
	if t.space != NSSitemap {
		return d.fail(RuleNamespaces, -1, "root element <%s> is in namespace %q, want %s", t.local, t.space, NSSitemap)
	}
	d.hdr = h
	rootLine := t.tokLine()
	h.Ext.Attrs = appendExtAttrs(h.Ext.Attrs, t.attrs)
	haveMD, mdLine := false, rootLine
	for !d.pending && !d.done {
		k, err := t.next()
		if err != nil {
			return err
		}
		switch k {
		case tokText:
			if !allSpace(t.text) {
				return d.fail(RuleStructure, -1, "text directly inside <%s>", rootName(h.Kind))
			}
		case tokEnd:
			if err := d.finish(); err != nil {
				return err
			}
		case tokStart:
			switch {
			case t.space == NSRS && string(t.local) == "md":
				if haveMD {
					return d.fail(RuleStructure, -1, "more than one root rs:md")
				}
				haveMD, mdLine = true, t.tokLine()
				if err := d.readMD(&h.MD, -1); err != nil {
					return err
				}
			case t.space == NSRS && string(t.local) == "ln":
				line := t.tokLine()
				h.Links = append(h.Links, Link{})
				l := &h.Links[len(h.Links)-1]
				if err := d.readLink(l, -1); err != nil {
					return err
				}
				if err := d.v.link(l, -1, line); err != nil {
					return err
				}
			case t.space == NSSitemap && string(t.local) == d.entryName():
				d.pending = true
			default:
				el, err := d.foreign(-1)
				if err != nil {
					return err
				}
				h.Ext.Elements = append(h.Ext.Elements, el)
			}
		}
	}
	if !haveMD {
		return verr(RuleRootMD, -1, rootLine, "the root has no rs:md child")
	}
	return d.v.header(h, mdLine)
}

func rootName(k Kind) string {
	if k == SitemapIndex {
		return "sitemapindex"
	}
	return "urlset"
}

// finish handles the end of the root element: only comments, processing
// instructions and whitespace may follow.
func (d *Decoder) finish() error {
	d.done = true
	k, err := d.t.next()
	if err != nil {
		return err
	}
	if k != tokEOF {
		return d.fail(RuleWellFormed, -1, "content after the root element")
	}
	return nil
}

// foreign handles an element that is not part of the ResourceSync model at
// its place: extension elements are captured, Sitemap and ResourceSync
// elements and elements in no namespace are captured in Lenient mode only.
func (d *Decoder) foreign(entry int) (RawElement, error) {
	t := d.t
	if d.opt.strict() {
		switch t.space {
		case NSSitemap, NSRS:
			return RawElement{}, d.fail(RuleStructure, entry, "unexpected element <%s> (namespace %s)", clip(t.local), t.space)
		case "":
			return RawElement{}, d.fail(RuleNamespaces, entry, "element <%s> has no namespace; extension elements need their own", clip(t.local))
		}
	}
	if t.space == NSSitemap && (string(t.local) == "url" || string(t.local) == "sitemap") {
		return RawElement{}, d.fail(RuleStructure, entry, "<%s> entry in a <%s> document", t.local, rootName(d.hdr.Kind))
	}
	return d.rc.capture(t)
}

func (d *Decoder) nextInto(e *Entry) error {
	if d.hdr == nil && d.err == nil {
		d.err = d.readHeader()
	}
	if d.err != nil {
		return d.err
	}
	if err := d.advance(); err != nil {
		d.err = err
		return err
	}
	if d.done {
		return io.EOF
	}
	d.pending = false
	if d.n >= d.opt.MaxEntries {
		d.err = d.fail(RuleMaxEntries, d.n, "more than %d entries", d.opt.MaxEntries)
		return d.err
	}
	line := d.t.tokLine()
	if err := d.readEntry(e, d.n); err != nil {
		d.err = err
		return err
	}
	if err := d.v.entry(d.n, line, e); err != nil {
		d.err = err
		return err
	}
	d.n++
	return nil
}

// advance moves to the start tag of the next entry or to the end of the root.
func (d *Decoder) advance() error {
	t := d.t
	for !d.pending && !d.done {
		k, err := t.next()
		if err != nil {
			return err
		}
		switch k {
		case tokText:
			if !allSpace(t.text) {
				return d.fail(RuleStructure, -1, "text directly inside <%s>", rootName(d.hdr.Kind))
			}
		case tokEnd:
			if err := d.finish(); err != nil {
				return err
			}
		case tokStart:
			switch {
			case t.space == NSSitemap && string(t.local) == d.entryName():
				d.pending = true
			case t.space == NSRS && (string(t.local) == "md" || string(t.local) == "ln"):
				return d.fail(RuleStructure, d.n, "root rs:%s after the first entry", t.local)
			default:
				el, err := d.foreign(-1)
				if err != nil {
					return err
				}
				d.trailer = append(d.trailer, el)
			}
		}
	}
	return nil
}

func allSpace(b []byte) bool {
	for _, c := range b {
		if !isXMLSpace(c) {
			return false
		}
	}
	return true
}

// appendExtAttrs keeps every attribute of an element whose model has no
// attributes of its own; the validator rejects unprefixed ones in Strict mode.
func appendExtAttrs(dst []xml.Attr, attrs []xattr) []xml.Attr {
	for i := range attrs {
		a := &attrs[i]
		dst = append(dst, xml.Attr{Name: xml.Name{Space: a.space, Local: string(a.local)}, Value: string(a.value)})
	}
	return dst
}
