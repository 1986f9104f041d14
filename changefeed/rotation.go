package changefeed

import "time"

// Rotation says when the open Change List of a channel is closed. The rules
// are a deterministic function of the channel's notification sequence (never
// of wall clock), so every process reading the same log cuts the same lists.
//
// Notifications are added to the open list whole (a notification is never
// split). The open list is closed, its until set to the last notification's
// until, when the next notification
//
//   - leaves a gap: its from is after the open list's until; the next list
//     starts at that from, so no list claims a window nobody covered;
//   - starts a new period: its from is at or after Boundary(list from), the
//     end of the Period-long slot (aligned to the Unix epoch in UTC, in
//     Source time) holding the list's from; the next list starts at the
//     closed list's until;
//   - would pass MaxEntries: the list already has entries and both together
//     have more than MaxEntries; the next list starts at the closed until.
//
// A notification whose from is before the open list's until (an overlap or a
// replay) is skipped: a Change List must stay in forward chronological order.
type Rotation struct {
	// MaxEntries caps the entries of a list; 0 or more than
	// DefaultMaxEntries means DefaultMaxEntries. A single notification with
	// more entries than MaxEntries (but at most DefaultMaxEntries) gets a
	// list of its own.
	MaxEntries int
	// Period is the length of the time slot a list covers at most, for
	// example time.Hour or 24*time.Hour; 0 disables time rotation.
	Period time.Duration
}

// Normalized returns r with MaxEntries defaulted and Period made non-negative.
func (r Rotation) Normalized() Rotation {
	if r.MaxEntries <= 0 || r.MaxEntries > DefaultMaxEntries {
		r.MaxEntries = DefaultMaxEntries
	}
	if r.Period < 0 {
		r.Period = 0
	}
	return r
}

// Boundary returns the end of the period holding from: the first multiple of
// Period after the Unix epoch that is later than from. It returns the zero
// time when Period is 0.
func (r Rotation) Boundary(from time.Time) time.Time {
	if r.Period <= 0 || from.IsZero() {
		return time.Time{}
	}
	p := int64(r.Period)
	ns := from.UnixNano()
	slot := ns / p
	if ns%p < 0 { // floor for instants before 1970
		slot--
	}
	return time.Unix(0, (slot+1)*p).UTC()
}

// Notice is what the rotation rules know of one notification: its log
// sequence, its window and its number of entries.
type Notice struct {
	Seq         uint64
	From, Until time.Time
	Entries     int
}

// ListBounds describes one Change List: the window it covers, the log
// sequences of its first and last notification and its entry count.
type ListBounds struct {
	// From starts the list's window; Until is the until of its last
	// notification. The document of an open list carries no until.
	From, Until       time.Time
	FirstSeq, LastSeq uint64
	Entries           int  // entries of all its notifications
	Notices           int  // notifications in the list
	Closed            bool // the list will not change again
	// Anchored reports that every process reading the log cuts a list
	// starting at FirstSeq, whatever record it started reading at: the list
	// follows a gap or a period boundary, or descends by entry cuts from a
	// list that does, or from the start of a Rotator told it saw the
	// channel's whole history.
	Anchored bool
}

// Cut tells what adding a notification did.
type Cut uint8

// Cuts returned by Rotator.Add.
const (
	// Appended: the notification joined the open list.
	Appended Cut = iota
	// Started: the notification started the first list.
	Started
	// CutGap: the open list was closed at a gap before the notification.
	CutGap
	// CutPeriod: the open list was closed because the notification starts a new period.
	CutPeriod
	// CutEntries: the open list was closed because of MaxEntries.
	CutEntries
	// Skipped: the notification overlaps the open list or is out of order
	// (or repeats a sequence already seen) and was left out.
	Skipped
)

// String returns the cut's name.
func (c Cut) String() string {
	switch c {
	case Appended:
		return "appended"
	case Started:
		return "started"
	case CutGap:
		return "gap"
	case CutPeriod:
		return "period"
	case CutEntries:
		return "entries"
	case Skipped:
		return "skipped"
	}
	return "cut(" + itoa(int(c)) + ")"
}

// Closes reports whether the cut closed the open list.
func (c Cut) Closes() bool { return c == CutGap || c == CutPeriod || c == CutEntries }

// Rotator applies a Rotation to one channel's notifications, fed in log
// order. It keeps only the open list's bounds. The zero Rotator is not
// usable; use NewRotator.
type Rotator struct {
	rot      Rotation
	open     ListBounds
	has      bool
	anchored bool
}

// NewRotator returns a Rotator with no list yet. whole says that the first
// notification fed is the channel's first one in every process's view (the
// log still holds its beginning); otherwise lists are anchored only from the
// first gap or period cut on, see ListBounds.Anchored.
func NewRotator(r Rotation, whole bool) *Rotator {
	return &Rotator{rot: r.Normalized(), anchored: whole}
}

// Open returns the open list and whether there is one.
func (r *Rotator) Open() (ListBounds, bool) { return r.open, r.has }

// Add feeds the next notification. When it closes the open list, closed
// holds that list's final bounds (Closed set) and cut says why; the
// notification then starts the new open list.
func (r *Rotator) Add(n Notice) (closed ListBounds, cut Cut) {
	if n.Until.Before(n.From) || n.Entries < 0 {
		return ListBounds{}, Skipped
	}
	if !r.has {
		r.open = ListBounds{From: n.From, FirstSeq: n.Seq, Anchored: r.anchored}
		r.has = true
		r.append(n)
		return ListBounds{}, Started
	}
	o := &r.open
	switch {
	case n.Seq <= o.LastSeq || n.From.Before(o.Until):
		return ListBounds{}, Skipped
	case n.From.After(o.Until):
		cut = CutGap
	case r.rot.Period > 0 && !n.From.Before(r.rot.Boundary(o.From)):
		cut = CutPeriod
	case o.Entries > 0 && o.Entries+n.Entries > r.rot.MaxEntries:
		cut = CutEntries
	default:
		r.append(n)
		return ListBounds{}, Appended
	}
	closed = *o
	closed.Closed = true
	next := ListBounds{From: closed.Until, FirstSeq: n.Seq, Anchored: true}
	switch cut {
	case CutGap:
		next.From = n.From
	case CutEntries:
		next.Anchored = closed.Anchored
	}
	r.open = next
	r.append(n)
	return closed, cut
}

// append adds n to the open list.
func (r *Rotator) append(n Notice) {
	r.open.Until = n.Until // kept while open: the window covered so far
	r.open.LastSeq = n.Seq
	r.open.Entries += n.Entries
	r.open.Notices++
}

// Listing says which Change Lists the Change List Index shows and how the
// Change List Archive is paged, given the closed lists a channel holds in
// chronological order (positions 0..closed-1):
//
//   - the Change List Index shows the last IndexSize closed lists and then
//     the open list, so it never passes DefaultMaxEntries entries;
//   - the Change List Archive lists every closed list; it is one document
//     while there are at most PageSize, otherwise PageSize lists per page,
//     the pages grouped by a Change List Archive Index.
type Listing struct {
	// IndexSize is how many closed lists the index shows; 0 means
	// DefaultIndexSize, and it is capped at DefaultMaxEntries-1.
	IndexSize int
	// PageSize is how many lists one archive document holds; 0 or more than
	// DefaultMaxEntries means DefaultMaxEntries.
	PageSize int
}

// DefaultIndexSize is the default Listing.IndexSize.
const DefaultIndexSize = 100

// Normalized returns l with defaults and caps applied.
func (l Listing) Normalized() Listing {
	if l.IndexSize <= 0 {
		l.IndexSize = DefaultIndexSize
	}
	l.IndexSize = min(l.IndexSize, DefaultMaxEntries-1)
	if l.PageSize <= 0 || l.PageSize > DefaultMaxEntries {
		l.PageSize = DefaultMaxEntries
	}
	return l
}

// IndexStart returns the position of the first closed list the index shows.
func (l Listing) IndexStart(closed int) int {
	return max(0, closed-l.Normalized().IndexSize)
}

// ArchivePages returns the number of archive pages for closed lists: 0 when
// there is none, 1 for a single Change List Archive, more when an archive
// index groups them.
func (l Listing) ArchivePages(closed int) int {
	ps := l.Normalized().PageSize
	return (max(closed, 0) + ps - 1) / ps
}

// ArchivePage returns the positions [lo, hi) of the closed lists on archive
// page k (0-based), and false when there is no such page.
func (l Listing) ArchivePage(k, closed int) (lo, hi int, ok bool) {
	if k < 0 || k >= l.ArchivePages(closed) {
		return 0, 0, false
	}
	ps := l.Normalized().PageSize
	return k * ps, min((k+1)*ps, closed), true
}
