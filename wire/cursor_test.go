package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCursor_ReadsBothFormats(t *testing.T) {
	tests := []struct {
		in   string
		want Cursor
	}{
		{"0", Cursor{Seq: 0}},
		{"5000", Cursor{Seq: 5000}},
		{"18446744073709551615", Cursor{Seq: 1<<64 - 1}},
		{"a1b2c3d4e5f60718-42", Cursor{Epoch: "a1b2c3d4e5f60718", Seq: 42}},
		{"z-0", Cursor{Epoch: "z", Seq: 0}},
		{strings.Repeat("9", MaxEpochLen) + "-7", Cursor{Epoch: strings.Repeat("9", MaxEpochLen), Seq: 7}},
	}
	for _, tt := range tests {
		got, err := ParseCursor(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseCursor(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("Cursor%+v.String() = %q, want %q", got, s, tt.in)
		}
	}
}

func TestParseCursor_RefusesWhatIsNotACursor(t *testing.T) {
	for _, in := range []string{
		"", "-", "-1", "1-", "a-", "A-1", "ab_c-1", "abc-def", "+5", "abc-+5", " 5", "5 ", "1-2-3",
		"18446744073709551616", "0x10", strings.Repeat("a", MaxEpochLen+1) + "-1", strings.Repeat("1", 100),
		"é-1", "a\x00-1", "a-1\n",
	} {
		if c, err := ParseCursor(in); err == nil {
			t.Errorf("ParseCursor(%q) = %+v; want an error", in, c)
		} else if len(err.Error()) > 200 {
			t.Errorf("ParseCursor(%q): error of %d bytes", in, len(err.Error()))
		}
	}
}

func TestCheckCursor_ResetsForeignOrAheadCursors(t *testing.T) {
	tests := []struct {
		c     Cursor
		epoch string
		last  uint64
		reset bool
	}{
		{Cursor{Seq: 3}, "e", 3, false},
		{Cursor{Seq: 0}, "", 0, false},
		{Cursor{Epoch: "e", Seq: 2}, "e", 3, false},
		{Cursor{Epoch: "e", Seq: 3}, "", 3, false}, // a log without an epoch checks sequences only
		{Cursor{Seq: 4}, "e", 3, true},
		{Cursor{Seq: 5000}, "", 3, true},
		{Cursor{Epoch: "e", Seq: 1}, "f", 3, true},
		{Cursor{Epoch: "e", Seq: 0}, "f", 0, true},
		{Cursor{Epoch: "e", Seq: 5000}, "e", 3, true},
	}
	for _, tt := range tests {
		err := CheckCursor(tt.c, tt.epoch, tt.last)
		if got := errors.Is(err, ErrCursorReset); got != tt.reset || (err != nil) != tt.reset {
			t.Errorf("CheckCursor(%+v, %q, %d) = %v; want reset %v", tt.c, tt.epoch, tt.last, err, tt.reset)
		}
	}
}

// FuzzParseCursor checks that ParseCursor never panics, and that what it
// accepts is a well-formed cursor whose text reads back the same. Seeds are
// in testdata/fuzz/FuzzParseCursor.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"0", "42", "abc123-42", "-", "a-", "18446744073709551616", "Z-1", "a-b-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			if len(err.Error()) > 400 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if c.Epoch != "" && !ValidEpoch(c.Epoch) {
			t.Fatalf("ParseCursor(%q) accepted epoch %q", s, c.Epoch)
		}
		back, err := ParseCursor(c.String())
		if err != nil || back != c {
			t.Fatalf("ParseCursor(%q) = %+v; its text %q reads back %+v, %v", s, c, c.String(), back, err)
		}
	})
}
