package changefeed

import (
	"math/rand/v2"
	"testing"
	"time"
)

var rotT0 = time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC)

// at returns rotT0 plus m minutes.
func at(m int) time.Time { return rotT0.Add(time.Duration(m) * time.Minute) }

// run feeds notices and returns the closed lists, the open list and the cuts.
func run(rot Rotation, whole bool, ns []Notice) (closed []ListBounds, open ListBounds, cuts []Cut) {
	r := NewRotator(rot, whole)
	for _, n := range ns {
		c, cut := r.Add(n)
		if cut.Closes() {
			closed = append(closed, c)
		}
		cuts = append(cuts, cut)
	}
	open, _ = r.Open()
	return closed, open, cuts
}

func TestRotation_Rules(t *testing.T) {
	hourly := Rotation{MaxEntries: 10, Period: time.Hour}
	tests := []struct {
		name   string
		rot    Rotation
		whole  bool
		in     []Notice
		closed []ListBounds
		open   ListBounds
		cuts   []Cut
	}{
		{
			name: "FirstNotificationOpensAList",
			rot:  hourly, whole: true,
			in:   []Notice{{1, at(0), at(5), 3}},
			open: ListBounds{From: at(0), Until: at(5), FirstSeq: 1, LastSeq: 1, Entries: 3, Notices: 1, Anchored: true},
			cuts: []Cut{Started},
		},
		{
			name: "ContiguousNotificationsGrowTheOpenList",
			rot:  hourly, whole: true,
			in:   []Notice{{1, at(0), at(5), 3}, {4, at(5), at(9), 7}},
			open: ListBounds{From: at(0), Until: at(9), FirstSeq: 1, LastSeq: 4, Entries: 10, Notices: 2, Anchored: true},
			cuts: []Cut{Started, Appended},
		},
		{
			name: "PassingMaxEntriesClosesBeforeTheNotification",
			rot:  hourly, whole: true,
			in: []Notice{{1, at(0), at(5), 6}, {2, at(5), at(9), 5}},
			closed: []ListBounds{
				{From: at(0), Until: at(5), FirstSeq: 1, LastSeq: 1, Entries: 6, Notices: 1, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(5), Until: at(9), FirstSeq: 2, LastSeq: 2, Entries: 5, Notices: 1, Anchored: true},
			cuts: []Cut{Started, CutEntries},
		},
		{
			name: "ANotificationLargerThanMaxEntriesIsNeverSplit",
			rot:  hourly, whole: true,
			in: []Notice{{1, at(0), at(1), 2}, {2, at(1), at(2), 25}, {3, at(2), at(3), 1}},
			closed: []ListBounds{
				{From: at(0), Until: at(1), FirstSeq: 1, LastSeq: 1, Entries: 2, Notices: 1, Closed: true, Anchored: true},
				{From: at(1), Until: at(2), FirstSeq: 2, LastSeq: 2, Entries: 25, Notices: 1, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(2), Until: at(3), FirstSeq: 3, LastSeq: 3, Entries: 1, Notices: 1, Anchored: true},
			cuts: []Cut{Started, CutEntries, CutEntries},
		},
		{
			name: "EmptyNotificationsNeverCutByCount",
			rot:  Rotation{MaxEntries: 1}, whole: true,
			in:   []Notice{{1, at(0), at(1), 0}, {2, at(1), at(2), 1}, {3, at(2), at(3), 0}},
			open: ListBounds{From: at(0), Until: at(3), FirstSeq: 1, LastSeq: 3, Entries: 1, Notices: 3, Anchored: true},
			cuts: []Cut{Started, Appended, Appended},
		},
		{
			name: "FromReachingThePeriodBoundaryCloses",
			rot:  hourly, whole: true,
			in: []Notice{{1, at(10), at(50), 1}, {2, at(50), at(60), 1}, {3, at(60), at(70), 1}},
			closed: []ListBounds{
				{From: at(10), Until: at(60), FirstSeq: 1, LastSeq: 2, Entries: 2, Notices: 2, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(60), Until: at(70), FirstSeq: 3, LastSeq: 3, Entries: 1, Notices: 1, Anchored: true},
			cuts: []Cut{Started, Appended, CutPeriod},
		},
		{
			name: "UntilPastTheBoundaryDoesNotCloseOnlyFromDoes",
			rot:  hourly, whole: true,
			in: []Notice{{1, at(50), at(65), 1}, {2, at(65), at(70), 1}},
			closed: []ListBounds{
				{From: at(50), Until: at(65), FirstSeq: 1, LastSeq: 1, Entries: 1, Notices: 1, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(65), Until: at(70), FirstSeq: 2, LastSeq: 2, Entries: 1, Notices: 1, Anchored: true},
			cuts: []Cut{Started, CutPeriod},
		},
		{
			name: "AGapClosesAndTheNextListStartsAtTheNotificationFrom",
			rot:  Rotation{}, whole: true,
			in: []Notice{{1, at(0), at(5), 1}, {2, at(7), at(9), 1}},
			closed: []ListBounds{
				{From: at(0), Until: at(5), FirstSeq: 1, LastSeq: 1, Entries: 1, Notices: 1, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(7), Until: at(9), FirstSeq: 2, LastSeq: 2, Entries: 1, Notices: 1, Anchored: true},
			cuts: []Cut{Started, CutGap},
		},
		{
			name: "OverlapsAndReplaysAreSkipped",
			rot:  Rotation{}, whole: true,
			in:   []Notice{{1, at(0), at(5), 1}, {2, at(3), at(8), 1}, {3, at(0), at(5), 1}, {1, at(5), at(6), 1}, {4, at(5), at(4), 1}},
			open: ListBounds{From: at(0), Until: at(5), FirstSeq: 1, LastSeq: 1, Entries: 1, Notices: 1, Anchored: true},
			cuts: []Cut{Started, Skipped, Skipped, Skipped, Skipped},
		},
		{
			name: "WithoutTheLogStartListsAreUnanchoredUntilAGapOrPeriodCut",
			rot:  Rotation{MaxEntries: 2, Period: time.Hour}, whole: false,
			in: []Notice{{9, at(30), at(40), 2}, {10, at(40), at(50), 2}, {11, at(60), at(61), 2}, {12, at(61), at(62), 2}},
			closed: []ListBounds{
				{From: at(30), Until: at(40), FirstSeq: 9, LastSeq: 9, Entries: 2, Notices: 1, Closed: true},
				{From: at(40), Until: at(50), FirstSeq: 10, LastSeq: 10, Entries: 2, Notices: 1, Closed: true},
				{From: at(60), Until: at(61), FirstSeq: 11, LastSeq: 11, Entries: 2, Notices: 1, Closed: true, Anchored: true},
			},
			open: ListBounds{From: at(61), Until: at(62), FirstSeq: 12, LastSeq: 12, Entries: 2, Notices: 1, Anchored: true},
			cuts: []Cut{Started, CutEntries, CutGap, CutEntries},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed, open, cuts := run(tt.rot, tt.whole, tt.in)
			if len(closed) != len(tt.closed) {
				t.Fatalf("closed lists = %+v, want %+v", closed, tt.closed)
			}
			for i := range closed {
				if !sameBounds(closed[i], tt.closed[i]) {
					t.Errorf("closed[%d] = %+v, want %+v", i, closed[i], tt.closed[i])
				}
			}
			if !sameBounds(open, tt.open) {
				t.Errorf("open = %+v, want %+v", open, tt.open)
			}
			for i := range cuts {
				if cuts[i] != tt.cuts[i] {
					t.Errorf("cut %d = %s, want %s", i, cuts[i], tt.cuts[i])
				}
			}
		})
	}
}

func sameBounds(a, b ListBounds) bool {
	return a.From.Equal(b.From) && a.Until.Equal(b.Until) && a.FirstSeq == b.FirstSeq && a.LastSeq == b.LastSeq &&
		a.Entries == b.Entries && a.Notices == b.Notices && a.Closed == b.Closed && a.Anchored == b.Anchored
}

func TestRotation_NormalizedCapsAtTheCommunityLimit(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{0, 50000}, {-1, 50000}, {60000, 50000}, {1000, 1000}} {
		if got := (Rotation{MaxEntries: tt.in}).Normalized().MaxEntries; got != tt.want {
			t.Errorf("MaxEntries %d normalized = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestRotation_BoundaryIsInSourceTimeAlignedToUTC(t *testing.T) {
	daily := Rotation{Period: 24 * time.Hour}
	tests := []struct {
		rot  Rotation
		from time.Time
		want time.Time
	}{
		{daily, time.Date(2013, 1, 3, 17, 4, 0, 0, time.UTC), time.Date(2013, 1, 4, 0, 0, 0, 0, time.UTC)},
		{daily, time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC), time.Date(2013, 1, 4, 0, 0, 0, 0, time.UTC)},
		// the same instant written in another zone has the same boundary
		{daily, time.Date(2013, 1, 3, 20, 0, 0, 0, time.FixedZone("+05", 5*3600)), time.Date(2013, 1, 4, 0, 0, 0, 0, time.UTC)},
		{Rotation{Period: time.Hour}, time.Date(2013, 1, 3, 17, 59, 59, 999, time.UTC), time.Date(2013, 1, 3, 18, 0, 0, 0, time.UTC)},
		{Rotation{Period: time.Hour}, time.Date(1969, 12, 31, 23, 30, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Rotation{}, time.Date(2013, 1, 3, 17, 4, 0, 0, time.UTC), time.Time{}},
	}
	for _, tt := range tests {
		if got := tt.rot.Boundary(tt.from); !got.Equal(tt.want) {
			t.Errorf("Boundary(%s) with period %s = %s, want %s", tt.from, tt.rot.Period, got, tt.want)
		}
	}
}

// TestRotation_ProcessesThatStartLaterAgreeOnAnchoredLists checks the
// determinism the hub relies on: a process that starts reading the log at
// any later notification cuts exactly the same lists from its first
// anchored list on as one that read everything.
func TestRotation_ProcessesThatStartLaterAgreeOnAnchoredLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rot := Rotation{MaxEntries: 50, Period: time.Hour}
	for trial := range 50 {
		ns := randomNotices(rng, 300)
		full, fullOpen, _ := run(rot, true, ns)
		full = append(full, fullOpen)
		start := rng.IntN(len(ns))
		late, lateOpen, _ := run(rot, false, ns[start:])
		late = append(late, lateOpen)
		byFirst := map[uint64]ListBounds{}
		for _, l := range full {
			byFirst[l.FirstSeq] = l
		}
		for _, l := range late {
			if !l.Anchored {
				continue
			}
			want, ok := byFirst[l.FirstSeq]
			want.Anchored = true
			if !ok || !sameBounds(l, want) {
				t.Fatalf("trial %d start %d: late list %+v, full history has %+v", trial, start, l, want)
			}
		}
	}
}

// randomNotices returns n notifications with random entry counts and
// windows, mostly contiguous, with gaps now and then.
func randomNotices(rng *rand.Rand, n int) []Notice {
	ns := make([]Notice, n)
	t := rotT0
	seq := uint64(0)
	for i := range ns {
		seq += 1 + uint64(rng.IntN(3))
		if rng.IntN(20) == 0 {
			t = t.Add(time.Duration(rng.IntN(30)) * time.Minute)
		}
		until := t.Add(time.Duration(rng.IntN(20)) * time.Minute)
		ns[i] = Notice{Seq: seq, From: t, Until: until, Entries: rng.IntN(40)}
		t = until
	}
	return ns
}

func TestRotation_ListsRespectMaxEntriesAndCoverEveryNotification(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rot := Rotation{MaxEntries: 60, Period: 2 * time.Hour}
	ns := randomNotices(rng, 2000)
	closed, open, _ := run(rot, true, ns)
	lists := append(closed, open)
	total, notices := 0, 0
	for i, l := range lists {
		if l.Entries > rot.MaxEntries {
			t.Errorf("list %d has %d entries, max %d", i, l.Entries, rot.MaxEntries)
		}
		if i > 0 && l.From.Before(lists[i-1].Until) {
			t.Errorf("list %d from %s before previous until %s", i, l.From, lists[i-1].Until)
		}
		if b := rot.Boundary(l.From); l.Notices > 1 && !b.IsZero() && !l.Until.Before(b.Add(rot.Period)) {
			t.Errorf("list %d [%s, %s] spans more than its period", i, l.From, l.Until)
		}
		total += l.Entries
		notices += l.Notices
	}
	want := 0
	for _, n := range ns {
		want += n.Entries
	}
	if total != want || notices != len(ns) {
		t.Errorf("lists hold %d entries in %d notifications, want %d in %d", total, notices, want, len(ns))
	}
}

func TestListing_IndexShowsTheLatestClosedLists(t *testing.T) {
	l := Listing{IndexSize: 3}
	for _, tt := range []struct{ closed, want int }{{0, 0}, {2, 0}, {3, 0}, {10, 7}} {
		if got := l.IndexStart(tt.closed); got != tt.want {
			t.Errorf("IndexStart(%d) = %d, want %d", tt.closed, got, tt.want)
		}
	}
	if got := (Listing{IndexSize: 1 << 20}).Normalized().IndexSize; got != DefaultMaxEntries-1 {
		t.Errorf("IndexSize is capped at %d, got %d", DefaultMaxEntries-1, got)
	}
}

func TestListing_ArchivePagesHoldAtMostPageSizeLists(t *testing.T) {
	l := Listing{PageSize: 4}
	tests := []struct {
		closed, pages int
		page          int
		lo, hi        int
		ok            bool
	}{
		{0, 0, 0, 0, 0, false},
		{3, 1, 0, 0, 3, true},
		{4, 1, 0, 0, 4, true},
		{9, 3, 2, 8, 9, true},
		{9, 3, 3, 0, 0, false},
		{9, 3, -1, 0, 0, false},
	}
	for _, tt := range tests {
		if got := l.ArchivePages(tt.closed); got != tt.pages {
			t.Errorf("ArchivePages(%d) = %d, want %d", tt.closed, got, tt.pages)
		}
		lo, hi, ok := l.ArchivePage(tt.page, tt.closed)
		if lo != tt.lo || hi != tt.hi || ok != tt.ok {
			t.Errorf("ArchivePage(%d, %d) = %d, %d, %v; want %d, %d, %v", tt.page, tt.closed, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
	if got := (Listing{}).Normalized().PageSize; got != DefaultMaxEntries {
		t.Errorf("default PageSize = %d", got)
	}
}
