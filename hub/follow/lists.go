package follow

import (
	"slices"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// ListRef is one Change List (or archive page) a poll may read, with the
// window an index or archive gave for it (zero when not given). Closed is
// set when the Source says the list will not change: it is in a Change List
// Archive, or a newer list follows it in its Change List Index. A list's
// own until does not close it (some Sources stamp an open list's until with
// the time of each request).
type ListRef struct {
	URL         string
	From, Until time.Time
	Closed      bool
}

// key identifies a closed list read to its end: its URL and window (a
// Source that restarts its history may serve another list at the same URL).
func (r ListRef) key() string {
	return r.URL + "\x00" + r.From.String() + "\x00" + r.Until.String()
}

// SelectLists picks the lists a poll reads, in the order to read them:
// each URL once (the first time it is named); not the closed ones done
// (read to their end, by key) nor those whose Until is before anchor (the
// channel has everything they hold); open lists always; sorted by From
// when every remaining list has one, else in the given order (index and
// archive entries are chronological). It is pure.
func SelectLists(refs []ListRef, anchor time.Time, done map[string]bool) []ListRef {
	seen := map[string]bool{}
	var out []ListRef
	allFrom := true
	for _, r := range refs {
		if r.URL == "" || seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		if r.Closed && (done[r.key()] || (!r.Until.IsZero() && !anchor.IsZero() && r.Until.Before(anchor))) {
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
// their locations resolved against base. The lists of an archive are
// closed; those of an index too, but for the newest (the greatest From,
// else the last named), which stays open.
func refsOf(doc *changefeed.Document, base string, archive bool) []ListRef {
	out := make([]ListRef, 0, len(doc.Entries))
	for _, e := range doc.Entries {
		r := ListRef{URL: resolve(base, e.Loc), Closed: true}
		if e.MD != nil {
			r.From, r.Until = e.MD.From.Time, e.MD.Until.Time
		}
		out = append(out, r)
	}
	if newest := len(out) - 1; !archive && newest >= 0 {
		for i, r := range out {
			if r.From.After(out[newest].From) {
				newest = i
			}
		}
		out[newest].Closed = false
	}
	return out
}
