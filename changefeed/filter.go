package changefeed

import (
	"fmt"
	"slices"
	"strings"
)

// MaxFilterPrefixes bounds the prefixes of one Filter.
const MaxFilterPrefixes = 32

// MaxFilterPrefixLen bounds one prefix, in bytes.
const MaxFilterPrefixLen = 2048

// Filter selects the entries a destination asked for: those whose loc
// starts with one of Prefixes (any loc when there are none) and whose
// change is one of Changes (any change when there are none). The zero
// Filter selects everything.
type Filter struct {
	Prefixes []string
	Changes  []Change
}

// ParseFilter reads an entry filter from the values of its two
// parameters, as every door takes them (a subscription's
// rshub.filter.prefix and rshub.filter.change, a live session's prefix and
// change, the subscriber's flags): prefixes holds one prefix per value,
// changes one comma-separated list of change types per value. An absent
// parameter (no value) leaves its axis unfiltered; a present one must say
// something, so an empty prefix, an empty list or an empty item of a list
// is refused rather than read as "no filter". Prefixes must be absolute
// http(s) URIs with a host, without spaces or control characters, at most
// MaxFilterPrefixes of at most MaxFilterPrefixLen bytes; change types are
// created, updated and deleted. Repeated values are kept once, in the
// order first given. Errors name the parameter by its role ("prefix",
// "change"); the caller adds its own parameter name.
func ParseFilter(prefixes, changes []string) (Filter, error) {
	var f Filter
	if len(prefixes) > MaxFilterPrefixes {
		return Filter{}, fmt.Errorf("prefix: given %d times; at most %d", len(prefixes), MaxFilterPrefixes)
	}
	for _, p := range prefixes {
		if err := checkFilterPrefix(p); err != nil {
			return Filter{}, fmt.Errorf("prefix: %w", err)
		}
		if !slices.Contains(f.Prefixes, p) {
			f.Prefixes = append(f.Prefixes, p)
		}
	}
	for _, list := range changes {
		for c := range strings.SplitSeq(list, ",") {
			switch c := Change(strings.TrimSpace(c)); c {
			case Created, Updated, Deleted:
				if !slices.Contains(f.Changes, c) {
					f.Changes = append(f.Changes, c)
				}
			case "":
				return Filter{}, fmt.Errorf("change: %.256q has an empty item; give created, updated and/or deleted, comma-separated", list)
			default:
				return Filter{}, fmt.Errorf("change: %.256q is not created, updated or deleted", string(c))
			}
		}
	}
	return f, nil
}

// checkFilterPrefix accepts an absolute http(s) URI prefix with a host.
func checkFilterPrefix(p string) error {
	if p == "" {
		return fmt.Errorf("empty; give an absolute http(s) URI prefix, or leave the parameter out")
	}
	if len(p) > MaxFilterPrefixLen {
		return fmt.Errorf("%d bytes; at most %d", len(p), MaxFilterPrefixLen)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("%.256q holds a space or control character; percent-encode it", p)
		}
	}
	rest, ok := strings.CutPrefix(p, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(p, "https://")
	}
	if !ok || rest == "" || strings.IndexByte("/?#@:", rest[0]) >= 0 {
		return fmt.Errorf("%.256q is not an absolute http(s) URI prefix with a host (the scheme in lower case, as locs are matched byte for byte)", p)
	}
	return nil
}

// IsZero reports whether f selects every entry.
func (f Filter) IsZero() bool { return len(f.Prefixes) == 0 && len(f.Changes) == 0 }

// Match reports whether f selects e.
func (f Filter) Match(e *Entry) bool {
	if len(f.Prefixes) > 0 {
		ok := false
		for _, p := range f.Prefixes {
			if strings.HasPrefix(e.Loc, p) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(f.Changes) > 0 {
		var c Change
		if e.MD != nil {
			c = e.MD.Change
		}
		for _, want := range f.Changes {
			if c == want {
				return true
			}
		}
		return false
	}
	return true
}

// Apply returns doc with only the entries f selects; the header, and so
// the notification's from and until, stay as they were, so a destination's
// continuity check still holds. doc itself is not changed; when f selects
// every entry, doc is returned.
func (f Filter) Apply(doc *Document) *Document {
	if f.IsZero() {
		return doc
	}
	out := *doc
	out.Entries = make([]Entry, 0, len(doc.Entries))
	for i := range doc.Entries {
		if f.Match(&doc.Entries[i]) {
			out.Entries = append(out.Entries, doc.Entries[i])
		}
	}
	return &out
}
