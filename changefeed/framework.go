package changefeed

import "fmt"

// Rules of Framework Notification payloads (ResourceSync Framework
// Notification 1.0.1 §2.1, §3), checked in Strict mode on every <url> of a
// framework-notification document. A framework notification's from and
// until are optional (RSF-2), so the continuity rules do not apply to it.
const (
	// RuleFrameworkChange: the change type is one the spec allows for the
	// changed document (RSF-5): a Resource List is created or updated, a
	// Resource Dump only created, a Change List or Change Dump created or
	// updated, a Capability List or Source Description created, updated
	// or deleted.
	RuleFrameworkChange Rule = "framework-change"
	// RuleFrameworkIndex: no notification is about an index document
	// (RSF-4); an entry whose rs:ln rel="index" names its own loc is one.
	RuleFrameworkIndex Rule = "framework-index"
	// RuleFrameworkCapability: an entry's capability names a capability
	// document (RSF-3): changelist, resourcelist, changedump,
	// resourcedump, capabilitylist, description or an archive value, never
	// a notification channel or a dump manifest.
	RuleFrameworkCapability Rule = "framework-capability"
)

// FrameworkChanges returns the change types a framework notification may
// announce for a document of capability c (RSF-5), and false when c is not
// a capability a framework notification names (RSF-3). Archives, which the
// spec's table leaves out, may be created or updated.
func FrameworkChanges(c Capability) ([]Change, bool) {
	switch c {
	case CapResourceList, CapChangeList, CapChangeDump,
		CapChangeListArchive, CapResourceListArchive, CapResourceDumpArchive, CapChangeDumpArchive:
		return []Change{Created, Updated}, true
	case CapResourceDump:
		return []Change{Created}, true
	case CapCapabilityList, CapDescription:
		return []Change{Created, Updated, Deleted}, true
	}
	return nil, false
}

// frameworkEntry checks one entry of a framework notification; the caller
// has checked that it has an rs:md with a capability and a change.
func (v *validator) frameworkEntry(idx, line int, e *Entry) error {
	if !v.strict {
		return nil
	}
	md := e.MD
	allowed, ok := FrameworkChanges(md.Capability)
	if !ok {
		return verr(RuleFrameworkCapability, idx, line, fmt.Sprintf("capability %q is not a capability document a framework notification may name", md.Capability))
	}
	found := false
	for _, c := range allowed {
		found = found || c == md.Change
	}
	if !found && md.Change != "" {
		return verr(RuleFrameworkChange, idx, line, fmt.Sprintf("a %s cannot be %s (allowed: %v)", md.Capability, md.Change, allowed))
	}
	for i := range e.Links {
		if e.Links[i].Rel == "index" && e.Links[i].Href == e.Loc {
			return verr(RuleFrameworkIndex, idx, line, fmt.Sprintf("%s is an index document: framework notifications name the document under it, with rs:ln rel=\"index\"", e.Loc))
		}
	}
	return nil
}
