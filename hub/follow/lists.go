package follow

import (
	"net/url"
	"slices"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// ListRef is one Change List (or archive page) a poll may read, with the
// window an index or archive gave for it (zero when not given; an
// unknown Until means open or unknown).
type ListRef struct {
	URL         string
	From, Until time.Time
}

// SelectLists picks the lists a poll reads, in the order to read them:
// each URL once (the first time it is named); not those done (closed lists
// already read to their end); not those whose Until is at or before
// anchor (the channel has everything they hold); sorted by From when every
// remaining list has one, else in the given order (index and archive
// entries are chronological). It is pure.
func SelectLists(refs []ListRef, anchor time.Time, done map[string]bool) []ListRef {
	seen := map[string]bool{}
	var out []ListRef
	allFrom := true
	for _, r := range refs {
		if r.URL == "" || seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		if done[r.URL] || (!r.Until.IsZero() && !anchor.IsZero() && !r.Until.After(anchor)) {
			continue
		}
		allFrom = allFrom && !r.From.IsZero()
		out = append(out, r)
	}
	if allFrom {
		slices.SortStableFunc(out, func(a, b ListRef) int { return a.From.Compare(b.From) })
	}
	return out
}

// refsOf returns the entries of an index or archive document as lists,
// their locations resolved against base.
func refsOf(doc *changefeed.Document, base string) []ListRef {
	b, _ := url.Parse(base)
	out := make([]ListRef, 0, len(doc.Entries))
	for _, e := range doc.Entries {
		loc := e.Loc
		if u, err := url.Parse(loc); err == nil && b != nil {
			loc = b.ResolveReference(u).String()
		}
		r := ListRef{URL: loc}
		if e.MD != nil {
			r.From, r.Until = e.MD.From.Time, e.MD.Until.Time
		}
		out = append(out, r)
	}
	return out
}
