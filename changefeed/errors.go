package changefeed

import (
	"errors"
	"strconv"
)

// Rule names one validation or hardening rule. A Rule is also an error
// value, so errors.Is(err, RuleHash) reports whether err broke that rule.
type Rule string

// Error returns the rule's name, so a Rule also prints as its name.
func (r Rule) Error() string { return string(r) }

// The rules. Each ValidationError carries exactly one of them.
const (
	// RuleWellFormed: the input is well-formed, namespace-well-formed XML 1.0 in UTF-8.
	RuleWellFormed Rule = "well-formed"
	// RuleDTD: no DOCTYPE, entity or other markup declaration.
	RuleDTD Rule = "dtd"
	// RuleLimits: nesting depth, name, attribute and token sizes stay within the hardening limits.
	RuleLimits Rule = "limits"
	// RuleMaxBytes: the document is at most Options.MaxBytes bytes (50 MiB by default).
	RuleMaxBytes Rule = "max-bytes"
	// RuleMaxEntries: the document has at most Options.MaxEntries entries (50,000 by default).
	RuleMaxEntries Rule = "max-entries"
	// RuleNamespaces: Sitemap elements are in the Sitemap namespace, rs:md and
	// rs:ln in the ResourceSync namespace, their attributes unprefixed, and
	// extension attributes in another, prefixed namespace.
	RuleNamespaces Rule = "namespaces"
	// RuleStructure: the root is <urlset> or <sitemapindex> and holds rs:md,
	// rs:ln and <url> (or <sitemap>) children in the places the Sitemap
	// format allows, each element at most once where it is not repeatable.
	RuleStructure Rule = "structure"
	// RuleRootMD: the root has an rs:md child with a capability attribute.
	RuleRootMD Rule = "root-md"
	// RuleCapability: the capability suits the root element (a notification
	// is a <urlset>); both modes accept the 1.0 value changelist-notification.
	RuleCapability Rule = "capability"
	// RuleRootAttributes: the root rs:md has the attributes its document type
	// makes mandatory (core Appendix A, notification spec: notification needs
	// from and until, change documents need from, resource documents need at).
	RuleRootAttributes Rule = "root-attributes"
	// RuleFromUntil: from <= until and at <= completed wherever both are given.
	RuleFromUntil Rule = "from-until"
	// RuleEntryMD: entries of change documents have an rs:md.
	RuleEntryMD Rule = "entry-md"
	// RuleEntryCapability: Capability List and Framework Notification
	// entries name a capability; Source Description entries point at Capability Lists.
	RuleEntryCapability Rule = "entry-capability"
	// RuleHub: a Capability List entry for a notification channel has rs:ln rel="hub".
	RuleHub Rule = "hub"
	// RuleChange: change is one of created, updated, deleted, and is present
	// in entries of change documents and notifications.
	RuleChange Rule = "change"
	// RuleChangeTime: every entry of a change document carries its time,
	// rs:md/@datetime or <lastmod>.
	RuleChangeTime Rule = "change-time"
	// RuleOrder: entries of change documents, indexes and archives are in
	// forward chronological order (by datetime, else from, else lastmod).
	RuleOrder Rule = "order"
	// RuleDatetimeRange: an entry's datetime lies within the root [from, until].
	RuleDatetimeRange Rule = "datetime-range"
	// RuleDateTime: every datetime is a W3C Datetime in a granularity the profile allows.
	RuleDateTime Rule = "datetime"
	// RuleHash: hash is space-separated alg:hex tokens; in Strict mode the
	// algorithm is md5, sha-1 or sha-256 and the digest has its length.
	RuleHash Rule = "hash"
	// RuleLength: length is a non-negative decimal integer.
	RuleLength Rule = "length"
	// RulePri: pri is an integer in 1..999999.
	RulePri Rule = "pri"
	// RuleLink: every rs:ln has rel and href.
	RuleLink Rule = "link"
	// RuleLoc: every entry has a non-empty <loc>.
	RuleLoc Rule = "loc"
	// RuleAbsoluteURI: in Strict mode, <loc> is an absolute http or https
	// URI with a host (the Sitemap protocol's rule) and rs:ln href is an
	// absolute URI (a scheme; a host too for http and https: ResourceSync
	// links may name other schemes, such as the gsiftp mirror of core example 24),
	// and both are URIs by RFC 3986's syntax, with the non-ASCII characters
	// RFC 3987 allows in IRIs (a <loc> becomes an atom:id, which must be an
	// IRI): "http://e/?x=<y>" and "http://e/a]b" break it (EscapeURI
	// mends such a reference), as does a relative reference such as "../x".
	RuleAbsoluteURI Rule = "absolute-uri"
	// RuleFuture: no from, until or change time (rs:md datetime, else the
	// lastmod standing for it) lies after the latest instant the caller
	// accepts. Parse cannot know the clock: CheckNotAfter applies it.
	RuleFuture Rule = "future"
)

// ErrInvalid matches every *ValidationError with errors.Is.
var ErrInvalid = errors.New("changefeed: invalid document")

// ValidationError reports a rule a document breaks and where.
type ValidationError struct {
	Rule  Rule
	Entry int // 0-based entry index, -1 for the root and anything outside entries
	Line  int // 1-based input line, 0 when unknown (in-memory documents)
	Msg   string
}

// Error formats the error as
// "changefeed: rule RULE: entry N (line L): MSG".
func (e *ValidationError) Error() string {
	b := make([]byte, 0, 48+len(e.Msg))
	b = append(b, "changefeed: rule "...)
	b = append(b, e.Rule...)
	b = append(b, ": "...)
	if e.Entry >= 0 {
		b = append(b, "entry "...)
		b = strconv.AppendInt(b, int64(e.Entry), 10)
	} else {
		b = append(b, "root"...)
	}
	if e.Line > 0 {
		b = append(b, " (line "...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ')')
	}
	b = append(b, ": "...)
	b = append(b, e.Msg...)
	return string(b)
}

// Is reports whether target is ErrInvalid or the error's Rule.
func (e *ValidationError) Is(target error) bool {
	if target == ErrInvalid {
		return true
	}
	if r, ok := target.(Rule); ok {
		return r == e.Rule
	}
	return false
}

func verr(rule Rule, entry, line int, msg string) *ValidationError {
	return &ValidationError{Rule: rule, Entry: entry, Line: line, Msg: msg}
}
