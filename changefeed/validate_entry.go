package changefeed

import (
	"fmt"
	"time"
)

// entry validates one entry against the root and the previous entries.
func (v *validator) entry(idx, line int, e *Entry) error {
	if e.Loc == "" {
		return verr(RuleLoc, idx, line, "entry without <loc>")
	}
	if err := v.checkLoc(e.Loc, idx, line); err != nil {
		return err
	}
	if v.checkRaw {
		if err := checkRawDate(e.LastMod, "lastmod", idx); err != nil {
			return err
		}
	}
	md := e.MD
	if md != nil {
		if err := v.mdCommon(md, idx, line); err != nil {
			return err
		}
	}
	if v.needChange {
		if md == nil {
			return verr(RuleEntryMD, idx, line, fmt.Sprintf("entries of a %s need an rs:md", v.capability))
		}
		if md.Change == "" {
			return verr(RuleChange, idx, line, fmt.Sprintf("entries of a %s need rs:md change", v.capability))
		}
	}
	if err := v.entryCapability(idx, line, e); err != nil {
		return err
	}
	if v.needTime && v.strict && (md == nil || md.DateTime.IsZero()) && e.LastMod.IsZero() {
		return verr(RuleChangeTime, idx, line, "change without rs:md datetime or <lastmod>")
	}
	if md != nil && !md.DateTime.IsZero() {
		dt := md.DateTime
		if !v.from.IsZero() && dt.Time.Before(v.from.Time) {
			return verr(RuleDatetimeRange, idx, line, fmt.Sprintf("datetime %s before from %s", dt.Raw, v.from.Raw))
		}
		if !v.until.IsZero() && dt.Time.After(v.until.Time) {
			return verr(RuleDatetimeRange, idx, line, fmt.Sprintf("datetime %s after until %s", dt.Raw, v.until.Raw))
		}
	}
	for i := range e.Links {
		if err := v.link(&e.Links[i], idx, line); err != nil {
			return err
		}
	}
	if err := v.extAttrs(e.Ext.Attrs, idx, line, entryElem(v.kind)); err != nil {
		return err
	}
	if err := v.rawElements(e.Ext.Elements, idx, line); err != nil {
		return err
	}
	if v.ordered {
		if key, raw, ok := orderKey(e); ok {
			if v.strict && v.hasLast && key.Before(v.last) {
				return verr(RuleOrder, idx, line, fmt.Sprintf("time %s is before %s of entry %d: entries must be in forward chronological order", raw, v.lastRaw, v.lastIdx))
			}
			v.last, v.lastRaw, v.lastIdx, v.hasLast = key, raw, idx, true
		}
	}
	return nil
}

func entryElem(k Kind) string {
	if k == SitemapIndex {
		return "sitemap"
	}
	return "url"
}

// orderKey is the time an entry is ordered by: rs:md datetime, else rs:md
// from (index and archive entries), else lastmod.
func orderKey(e *Entry) (time.Time, string, bool) {
	if md := e.MD; md != nil {
		if !md.DateTime.IsZero() {
			return md.DateTime.Time, md.DateTime.Raw, true
		}
		if !md.From.IsZero() {
			return md.From.Time, md.From.Raw, true
		}
	}
	if !e.LastMod.IsZero() {
		return e.LastMod.Time, e.LastMod.Raw, true
	}
	return time.Time{}, "", false
}

func (v *validator) entryCapability(idx, line int, e *Entry) error {
	md := e.MD
	switch v.capability {
	case CapCapabilityList, CapFrameworkNotification:
		if md == nil || md.Capability == "" {
			return verr(RuleEntryCapability, idx, line, fmt.Sprintf("entries of a %s need rs:md capability", v.capability))
		}
		if v.capability == CapCapabilityList && v.strict &&
			(md.Capability == CapChangeNotification || md.Capability == CapFrameworkNotification) {
			for i := range e.Links {
				if e.Links[i].Rel == "hub" {
					return nil
				}
			}
			return verr(RuleHub, idx, line, fmt.Sprintf("%s channel %s without rs:ln rel=\"hub\"", md.Capability, e.Loc))
		}
		if v.capability == CapFrameworkNotification && md.Change != "" {
			return v.frameworkEntry(idx, line, e)
		}
	case CapDescription:
		if md != nil && v.strict && md.Capability != CapCapabilityList {
			return verr(RuleEntryCapability, idx, line, fmt.Sprintf("Source Description entry rs:md capability %q, want capabilitylist", md.Capability))
		}
	}
	return nil
}
