package changefeed

import (
	"testing"
	"time"
)

func TestCheckContinuity(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2013, 1, 3, 0, m, 0, 0, time.UTC) }
	var zero time.Time
	cases := []struct {
		name                   string
		lastUntil, from, until time.Time
		want                   Continuity
	}{
		{"first", zero, at(0), at(10), Continuity{Verdict: First}},
		{"contiguous", at(10), at(10), at(20), Continuity{Verdict: Contiguous}},
		{"contiguous other zone", at(10), at(10).In(time.FixedZone("x", 7200)), at(20), Continuity{Verdict: Contiguous}},
		{"gap", at(10), at(15), at(20), Continuity{Verdict: Gap, Missing: Window{From: at(10), Until: at(15)}}},
		{"overlap", at(10), at(5), at(20), Continuity{Verdict: Overlap}},
		{"out of order before", at(10), at(0), at(5), Continuity{Verdict: OutOfOrder}},
		{"out of order repeat", at(10), at(0), at(10), Continuity{Verdict: OutOfOrder}},
		{"empty window at lastUntil", at(10), at(10), at(10), Continuity{Verdict: Contiguous}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CheckContinuity(c.lastUntil, c.from, c.until)
			if got.Verdict != c.want.Verdict || !got.Missing.From.Equal(c.want.Missing.From) || !got.Missing.Until.Equal(c.want.Missing.Until) {
				t.Fatalf("got %v %+v, want %v %+v", got.Verdict, got.Missing, c.want.Verdict, c.want.Missing)
			}
		})
	}
}

func TestVerdict_String(t *testing.T) {
	want := map[Verdict]string{First: "first", Contiguous: "contiguous", Gap: "gap", Overlap: "overlap", OutOfOrder: "out-of-order", 9: "verdict(9)"}
	for v, s := range want {
		if v.String() != s {
			t.Errorf("%d.String() = %q, want %q", v, v.String(), s)
		}
	}
}
