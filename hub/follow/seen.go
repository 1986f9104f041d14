package follow

import (
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Window returns the from and until of the notifications that publish fresh
// (not empty), read from a list whose root says [listFrom, listUntil]:
//   - from is the channel's anchor; with no anchor yet, the list's from;
//     when the list starts after covered (what the follower knows the
//     channel holds all of), the list's from: the Source no longer lists
//     what it changed in between, and the hub records the gap. From is
//     never after the first entry's time.
//   - until is the last entry's time, or a closed list's until when later
//     (an open list's until is the Source's clock, not a promise).
//
// It is pure.
func Window(anchor, covered, listFrom, listUntil time.Time, closed bool, fresh []changefeed.Entry) (from, until time.Time) {
	from = anchor
	if anchor.IsZero() || (!covered.IsZero() && listFrom.After(covered)) {
		from = listFrom
	}
	first, last := changefeed.EntryTime(fresh[0]), changefeed.EntryTime(fresh[len(fresh)-1])
	if from.IsZero() || from.After(first) {
		from = first
	}
	until = last
	if closed && listUntil.After(until) {
		until = listUntil
	}
	return from, until
}
