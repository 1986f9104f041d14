package changefeed

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Identity names one change of a Source: its location, kind, time, hash and
// length. Two entries of a Change List with the same Identity are the same
// change; two with the same time are not.
func Identity(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Loc)
	b.WriteByte(0)
	if e.MD != nil {
		b.WriteString(string(e.MD.Change))
		b.WriteByte(0)
		b.WriteString(e.MD.Hash)
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(e.MD.Length, 10))
	}
	b.WriteByte(0)
	b.WriteString(EntryTime(e).UTC().Format(time.RFC3339Nano))
	return b.String()
}

// EntryTime is when an entry's change happened: its datetime, else its
// lastmod (zero when it has neither).
func EntryTime(e Entry) time.Time {
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		return e.MD.DateTime.Time
	}
	return e.LastMod.Time
}

// Seen is what a channel holds at its anchor: the anchor (the until of its
// last notification) and the identities of the entries published with that
// very time. Entries before the anchor are all held; entries after it are
// not; entries at it are held when their identity is in IDs. All stands
// for every entry at the anchor, when the follower cannot know which ones
// the channel holds (its last notification is gone from the log). Its
// memory is the entries of one instant, whatever the history.
type Seen struct {
	At  time.Time
	IDs map[string]bool
	All bool
}

// holds reports whether the channel holds the change e, made at t.
func (s Seen) holds(e Entry, t time.Time) bool {
	switch {
	case s.At.IsZero():
		return false
	case t.Before(s.At):
		return true
	case t.After(s.At):
		return false
	}
	return s.All || s.IDs[Identity(e)]
}

// Fresh returns the entries of a Change List the channel does not hold:
// those after the anchor, and those at the anchor whose identity it has
// not published; each identity once, in chronological order (stable, so
// a Source's order of simultaneous changes is kept). Entries without a
// time are left out (the hub cannot place them). It is pure.
func Fresh(entries []Entry, seen Seen) []Entry {
	var out []Entry
	dup := map[string]bool{}
	for _, e := range entries {
		t := EntryTime(e)
		if t.IsZero() || seen.holds(e, t) {
			continue
		}
		id := Identity(e)
		if dup[id] {
			continue
		}
		dup[id] = true
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return EntryTime(a).Compare(EntryTime(b)) })
	return out
}

// Advance returns what the channel holds after published (in order) went
// out in notifications ending at until (at or after the last entry's time).
func Advance(seen Seen, published []Entry, until time.Time) Seen {
	next := Seen{At: until, IDs: map[string]bool{}}
	if until.Equal(seen.At) {
		next.All = seen.All
		for id := range seen.IDs {
			next.IDs[id] = true
		}
	}
	for _, e := range published {
		if EntryTime(e).Equal(until) {
			next.IDs[Identity(e)] = true
		}
	}
	return next
}

// SeenAt returns what a channel whose anchor is at holds at it, from the
// entries of its last notification (known false: they are unknown, and every
// entry at the anchor counts as held).
func SeenAt(at time.Time, last []Entry, known bool) Seen {
	if !known {
		return Seen{At: at, All: true}
	}
	return Advance(Seen{}, last, at)
}
