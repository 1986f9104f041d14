package changefeed

import (
	"encoding/xml"
	"fmt"
	"time"
)

// Validate checks an in-memory document, for example one the hub built,
// against every rule of opt.Mode. It also checks that each DateTime's Time
// matches its Raw form. Entry errors carry the entry index and line 0.
func Validate(doc *Document, opt Options) error {
	if doc == nil {
		return verr(RuleRootMD, -1, 0, "nil document")
	}
	opt = opt.normalized()
	var v validator
	v.init(opt, true)
	if err := v.header(&doc.Header, 0); err != nil {
		return err
	}
	for i := range doc.Entries {
		if i >= opt.MaxEntries {
			return verr(RuleMaxEntries, i, 0, fmt.Sprintf("more than %d entries", opt.MaxEntries))
		}
		if err := v.entry(i, 0, &doc.Entries[i]); err != nil {
			return err
		}
	}
	return v.rawElements(doc.Trailer, -1, 0)
}

// validator holds the per-document state of validation: the root's
// capability and window and the time of the previous entry.
type validator struct {
	strict   bool
	checkRaw bool // re-parse DateTime.Raw (in-memory documents)

	kind       Kind
	capability Capability
	needChange bool // entries need rs:md/@change
	needTime   bool // entries need datetime or lastmod
	ordered    bool
	from       DateTime
	until      DateTime

	last    time.Time
	lastRaw string
	lastIdx int
	hasLast bool
}

func (v *validator) init(opt Options, checkRaw bool) {
	*v = validator{strict: opt.strict(), checkRaw: checkRaw}
}

func (v *validator) header(h *Header, line int) error {
	md := &h.MD
	v.kind = h.Kind
	if h.Kind != URLSet && h.Kind != SitemapIndex {
		return verr(RuleStructure, -1, line, fmt.Sprintf("unknown document kind %d", h.Kind))
	}
	if md.Capability == "" {
		return verr(RuleRootMD, -1, line, "the root rs:md has no capability")
	}
	v.capability = md.Capability
	if err := v.mdCommon(md, -1, line); err != nil {
		return err
	}
	need := func(d DateTime, attr string) error {
		if d.IsZero() {
			return verr(RuleRootAttributes, -1, line, fmt.Sprintf("a %s document needs a root rs:md %s attribute", md.Capability, attr))
		}
		return nil
	}
	urlsetOnly := func() error {
		if h.Kind != URLSet {
			return verr(RuleCapability, -1, line, fmt.Sprintf("a %s document must be a <urlset>", md.Capability))
		}
		return nil
	}
	var err error
	switch md.Capability {
	case CapChangeListNotification, CapChangeNotification:
		if err = urlsetOnly(); err == nil {
			if err = need(md.From, "from"); err == nil {
				err = need(md.Until, "until")
			}
		}
		v.needChange, v.needTime, v.ordered = true, true, true
	case CapFrameworkNotification:
		err = urlsetOnly()
		v.needChange, v.ordered = true, true
	case CapChangeList, CapChangeDumpManifest:
		err = need(md.From, "from")
		v.ordered = true
		v.needChange = h.Kind == URLSet
		v.needTime = h.Kind == URLSet
	case CapChangeDump:
		err = need(md.From, "from")
		v.ordered = true
	case CapResourceList, CapResourceDump, CapResourceDumpManifest:
		err = need(md.At, "at")
	case CapChangeListArchive, CapChangeDumpArchive:
		v.ordered = true
	}
	if err != nil {
		return err
	}
	v.from, v.until = md.From, md.Until
	for i := range h.Links {
		if err := v.link(&h.Links[i], -1, line); err != nil {
			return err
		}
	}
	if err := v.extAttrs(h.Ext.Attrs, -1, line, "root"); err != nil {
		return err
	}
	return v.rawElements(h.Ext.Elements, -1, line)
}

// mdCommon checks what applies to every rs:md.
func (v *validator) mdCommon(md *MD, idx, line int) error {
	if v.checkRaw {
		for _, d := range [...]struct {
			dt   DateTime
			name string
		}{{md.DateTime, "datetime"}, {md.From, "from"}, {md.Until, "until"}, {md.At, "at"}, {md.Completed, "completed"}} {
			if err := checkRawDate(d.dt, d.name, idx); err != nil {
				return err
			}
		}
	}
	if md.Change != "" && md.Change != Created && md.Change != Updated && md.Change != Deleted {
		return verr(RuleChange, idx, line, fmt.Sprintf("change %q is not created, updated or deleted", md.Change))
	}
	if md.Hash != "" {
		if err := checkHash(md.Hash, v.strict); err != nil {
			return verr(RuleHash, idx, line, err.Error())
		}
	}
	if md.Length < -1 {
		return verr(RuleLength, idx, line, fmt.Sprintf("length %d is negative", md.Length))
	}
	if !md.From.IsZero() && !md.Until.IsZero() && md.Until.Time.Before(md.From.Time) {
		return verr(RuleFromUntil, idx, line, fmt.Sprintf("until %s before from %s", md.Until.Raw, md.From.Raw))
	}
	if !md.At.IsZero() && !md.Completed.IsZero() && md.Completed.Time.Before(md.At.Time) {
		return verr(RuleFromUntil, idx, line, fmt.Sprintf("completed %s before at %s", md.Completed.Raw, md.At.Raw))
	}
	return v.extAttrs(md.Ext, idx, line, "rs:md")
}

func checkRawDate(d DateTime, name string, idx int) error {
	if d.Raw == "" {
		if !d.Time.IsZero() {
			return verr(RuleDateTime, idx, 0, fmt.Sprintf("%s has a Time but no Raw form (use NewDateTime)", name))
		}
		return nil
	}
	tm, err := parseW3C(d.Raw)
	if err != nil {
		return verr(RuleDateTime, idx, 0, fmt.Sprintf("%s %q is not a W3C datetime", name, d.Raw))
	}
	if !tm.Equal(d.Time) {
		return verr(RuleDateTime, idx, 0, fmt.Sprintf("%s Time %s does not match Raw %q", name, d.Time.Format(time.RFC3339Nano), d.Raw))
	}
	return nil
}

func (v *validator) link(l *Link, idx, line int) error {
	if l.Rel == "" {
		return verr(RuleLink, idx, line, "rs:ln without rel")
	}
	if l.Href == "" {
		return verr(RuleLink, idx, line, fmt.Sprintf("rs:ln rel=%q without href", l.Rel))
	}
	if err := v.checkHref(l, idx, line); err != nil {
		return err
	}
	if v.checkRaw {
		if err := checkRawDate(l.Modified, "modified", idx); err != nil {
			return err
		}
	}
	if l.Hash != "" {
		if err := checkHash(l.Hash, v.strict); err != nil {
			return verr(RuleHash, idx, line, "rs:ln: "+err.Error())
		}
	}
	if l.Length < -1 {
		return verr(RuleLength, idx, line, fmt.Sprintf("rs:ln length %d is negative", l.Length))
	}
	if l.Pri < -1 || l.Pri > 999999 { // 0 and -1 mean absent
		return verr(RulePri, idx, line, fmt.Sprintf("rs:ln pri %d is outside 1..999999", l.Pri))
	}
	return v.extAttrs(l.Ext, idx, line, "rs:ln")
}

// extAttrs rejects, in Strict mode, extension attributes that are not in a
// namespace of their own.
func (v *validator) extAttrs(attrs []xml.Attr, idx, line int, where string) error {
	if !v.strict {
		return nil
	}
	for i := range attrs {
		switch attrs[i].Name.Space {
		case "":
			return verr(RuleNamespaces, idx, line, fmt.Sprintf("unknown attribute %s on %s; extension attributes must be in their own namespace", attrs[i].Name.Local, where))
		case NSRS, NSSitemap:
			return verr(RuleNamespaces, idx, line, fmt.Sprintf("attribute %s on %s is in namespace %s; ResourceSync attributes are unprefixed", attrs[i].Name.Local, where, attrs[i].Name.Space))
		}
	}
	return nil
}

func (v *validator) rawElements(els []RawElement, idx, line int) error {
	if !v.strict {
		return nil
	}
	for i := range els {
		switch els[i].Name.Space {
		case NSSitemap, NSRS:
			return verr(RuleStructure, idx, line, fmt.Sprintf("unexpected element <%s> (namespace %s)", els[i].Name.Local, els[i].Name.Space))
		case "":
			return verr(RuleNamespaces, idx, line, fmt.Sprintf("element <%s> has no namespace", els[i].Name.Local))
		}
	}
	return nil
}
