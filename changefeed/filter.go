package changefeed

import (
	"fmt"
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

// ParseFilter reads a filter from its parameter form: prefixes, each an
// absolute URI prefix, and changes, a comma-separated list of created,
// updated and deleted. It refuses more than MaxFilterPrefixes prefixes,
// longer ones than MaxFilterPrefixLen, and unknown change types.
func ParseFilter(prefixes []string, changes string) (Filter, error) {
	var f Filter
	if len(prefixes) > MaxFilterPrefixes {
		return f, fmt.Errorf("changefeed: filter: %d prefixes; at most %d", len(prefixes), MaxFilterPrefixes)
	}
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		if len(p) > MaxFilterPrefixLen {
			return f, fmt.Errorf("changefeed: filter: a prefix of %d bytes; at most %d", len(p), MaxFilterPrefixLen)
		}
		f.Prefixes = append(f.Prefixes, p)
	}
	for _, c := range strings.Split(changes, ",") {
		switch c = strings.TrimSpace(c); Change(c) {
		case "":
		case Created, Updated, Deleted:
			f.Changes = append(f.Changes, Change(c))
		default:
			return f, fmt.Errorf("changefeed: filter: change %q is not created, updated or deleted", c)
		}
	}
	return f, nil
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
