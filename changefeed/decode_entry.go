package changefeed

import (
	"bytes"
)

// readEntry reads a <url> or <sitemap> whose start tag is current.
func (d *Decoder) readEntry(e *Entry, idx int) error {
	t := d.t
	e.Ext.Attrs = appendExtAttrs(e.Ext.Attrs, t.attrs)
	var seen [4]bool // loc, lastmod, changefreq, priority
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		switch k {
		case tokText:
			if !allSpace(t.text) {
				return d.fail(RuleStructure, idx, "text directly inside <%s>", d.entryName())
			}
		case tokEnd:
			return nil
		case tokStart:
			if t.space == NSSitemap {
				slot := -1
				switch string(t.local) {
				case "loc":
					slot = 0
				case "lastmod":
					slot = 1
				case "changefreq":
					slot = 2
				case "priority":
					slot = 3
				}
				if slot >= 0 {
					if seen[slot] {
						return d.fail(RuleStructure, idx, "more than one <%s>", t.local)
					}
					seen[slot] = true
					if err := d.readSitemapField(e, slot, idx); err != nil {
						return err
					}
					continue
				}
			}
			if t.space == NSRS && string(t.local) == "md" {
				if e.MD != nil {
					return d.fail(RuleStructure, idx, "more than one rs:md")
				}
				e.MD = new(MD)
				if err := d.readMD(e.MD, idx); err != nil {
					return err
				}
				continue
			}
			if t.space == NSRS && string(t.local) == "ln" {
				e.Links = append(e.Links, Link{})
				if err := d.readLink(&e.Links[len(e.Links)-1], idx); err != nil {
					return err
				}
				continue
			}
			el, err := d.foreign(idx)
			if err != nil {
				return err
			}
			e.Ext.Elements = append(e.Ext.Elements, el)
		}
	}
}

func (d *Decoder) readSitemapField(e *Entry, slot, idx int) error {
	t := d.t
	if len(t.attrs) > 0 && d.opt.strict() {
		return d.fail(RuleStructure, idx, "attribute %s on <%s>", clip(t.attrs[0].local), t.local)
	}
	name := string(t.local)
	text, err := d.readText(idx, name)
	if err != nil {
		return err
	}
	switch slot {
	case 0:
		e.Loc = string(text)
	case 1:
		tm, err := parseW3C(text)
		if err != nil {
			return d.fail(RuleDateTime, idx, "lastmod %q is not a W3C datetime", clip(text))
		}
		e.LastMod = DateTime{Time: tm, Raw: string(text)}
	case 2:
		e.ChangeFreq = string(text)
	case 3:
		e.Priority = string(text)
	}
	return nil
}

// readText reads the character content of a text-only element up to its
// end tag and returns it without surrounding whitespace. The result is valid
// until the next call.
func (d *Decoder) readText(idx int, name string) ([]byte, error) {
	t := d.t
	d.tbuf = d.tbuf[:0]
	for {
		k, err := t.next()
		if err != nil {
			return nil, err
		}
		switch k {
		case tokText:
			// t.text points into the tokenizer's buffer, which the next
			// read may move: copy it.
			d.tbuf = append(d.tbuf, t.text...)
		case tokStart:
			return nil, d.fail(RuleStructure, idx, "element <%s> inside <%s>", clip(t.local), name)
		case tokEnd:
			return bytes.Trim(d.tbuf, " \t\r\n"), nil
		}
	}
}

// readMD reads the attributes of an rs:md and skips to its end.
func (d *Decoder) readMD(md *MD, idx int) error {
	t := d.t
	md.Length = -1
	for i := range t.attrs {
		a := &t.attrs[i]
		if a.space != "" || !d.mdAttr(md, a) {
			md.Ext = appendExtAttrs(md.Ext, t.attrs[i:i+1])
			continue
		}
		if len(a.value) == 0 && string(a.local) != "capability" {
			return d.fail(attrRule(string(a.local)), idx, "empty %s attribute on rs:md", a.local)
		}
		var err error
		switch string(a.local) {
		case "datetime":
			md.DateTime, err = d.dateAttr(a, idx)
		case "from":
			md.From, err = d.dateAttr(a, idx)
		case "until":
			md.Until, err = d.dateAttr(a, idx)
		case "at":
			md.At, err = d.dateAttr(a, idx)
		case "completed":
			md.Completed, err = d.dateAttr(a, idx)
		case "length":
			md.Length, err = d.intAttr(a, idx, RuleLength)
		}
		if err != nil {
			return err
		}
	}
	return d.skipEmpty(idx, "rs:md")
}

// mdAttr stores the string-valued attributes of rs:md and reports whether
// the attribute is one ResourceSync defines.
func (d *Decoder) mdAttr(md *MD, a *xattr) bool {
	switch string(a.local) {
	case "capability":
		md.Capability = Capability(internCapability(a.value))
	case "change":
		md.Change = Change(internChange(a.value))
	case "hash":
		md.Hash = string(a.value)
	case "type":
		md.Type = internType(a.value)
	case "encoding":
		md.Encoding = string(a.value)
	case "path":
		md.Path = string(a.value)
	case "datetime", "from", "until", "at", "completed", "length":
	default:
		return false
	}
	return true
}

// readLink reads an rs:ln and skips to its end.
func (d *Decoder) readLink(l *Link, idx int) error {
	t := d.t
	l.Length, l.Pri = -1, -1
	for i := range t.attrs {
		a := &t.attrs[i]
		if a.space != "" {
			l.Ext = appendExtAttrs(l.Ext, t.attrs[i:i+1])
			continue
		}
		name := string(a.local)
		switch name {
		case "rel", "href", "modified", "hash", "length", "type", "encoding", "path", "pri":
			if len(a.value) == 0 {
				return d.fail(attrRule(name), idx, "empty %s attribute on rs:ln", name)
			}
		}
		var err error
		switch name {
		case "rel":
			l.Rel = internRel(a.value)
		case "href":
			l.Href = string(a.value)
		case "modified":
			l.Modified, err = d.dateAttr(a, idx)
		case "hash":
			l.Hash = string(a.value)
		case "length":
			l.Length, err = d.intAttr(a, idx, RuleLength)
		case "type":
			l.Type = internType(a.value)
		case "encoding":
			l.Encoding = string(a.value)
		case "path":
			l.Path = string(a.value)
		case "pri":
			var p int64
			p, err = d.intAttr(a, idx, RulePri)
			if err == nil && (p < 1 || p > 999999) {
				err = d.fail(RulePri, idx, "pri %s is outside 1..999999", clip(a.value))
			}
			l.Pri = int(p)
		default:
			l.Ext = appendExtAttrs(l.Ext, t.attrs[i:i+1])
		}
		if err != nil {
			return err
		}
	}
	return d.skipEmpty(idx, "rs:ln")
}

func attrRule(name string) Rule {
	switch name {
	case "datetime", "from", "until", "at", "completed", "modified":
		return RuleDateTime
	case "hash":
		return RuleHash
	case "length":
		return RuleLength
	case "pri":
		return RulePri
	case "rel", "href":
		return RuleLink
	case "change":
		return RuleChange
	}
	return RuleStructure
}

// skipEmpty consumes the content of rs:md or rs:ln, which must be empty
// apart from whitespace.
func (d *Decoder) skipEmpty(idx int, name string) error {
	for {
		k, err := d.t.next()
		if err != nil {
			return err
		}
		switch k {
		case tokEnd:
			return nil
		case tokText:
			if !allSpace(d.t.text) {
				return d.fail(RuleStructure, idx, "text inside %s", name)
			}
		case tokStart:
			return d.fail(RuleStructure, idx, "element <%s> inside %s", clip(d.t.local), name)
		}
	}
}

func (d *Decoder) dateAttr(a *xattr, idx int) (DateTime, error) {
	tm, err := parseW3C(a.value)
	if err != nil {
		return DateTime{}, d.fail(RuleDateTime, idx, "%s %q is not a W3C datetime", a.local, clip(a.value))
	}
	return DateTime{Time: tm, Raw: string(a.value)}, nil
}

func (d *Decoder) intAttr(a *xattr, idx int, rule Rule) (int64, error) {
	v, ok := parseUint(a.value)
	if !ok {
		return 0, d.fail(rule, idx, "%s %q is not a non-negative integer", a.local, clip(a.value))
	}
	return v, nil
}

// parseUint parses a decimal integer without sign that fits an int64.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func internChange(b []byte) string {
	switch string(b) {
	case "created":
		return string(Created)
	case "updated":
		return string(Updated)
	case "deleted":
		return string(Deleted)
	}
	return string(b)
}

func internCapability(b []byte) string {
	for _, c := range knownCapabilities {
		if string(b) == string(c) {
			return string(c)
		}
	}
	return string(b)
}

var knownCapabilities = [...]Capability{
	CapChangeNotification, CapChangeListNotification, CapFrameworkNotification,
	CapChangeList, CapChangeListArchive, CapResourceList, CapResourceDump,
	CapChangeDump, CapResourceDumpManifest, CapChangeDumpManifest,
	CapCapabilityList, CapDescription, CapResourceListArchive,
	CapResourceDumpArchive, CapChangeDumpArchive,
}

func internType(b []byte) string {
	switch string(b) {
	case "text/html":
		return "text/html"
	case "application/xml":
		return "application/xml"
	case "application/pdf":
		return "application/pdf"
	case "application/json":
		return "application/json"
	case "text/plain":
		return "text/plain"
	}
	return string(b)
}

func internRel(b []byte) string {
	switch string(b) {
	case "up":
		return "up"
	case "index":
		return "index"
	case "describedby":
		return "describedby"
	case "duplicate":
		return "duplicate"
	case "alternate":
		return "alternate"
	case "canonical":
		return "canonical"
	case "hub":
		return "hub"
	case "contents":
		return "contents"
	}
	return string(b)
}
