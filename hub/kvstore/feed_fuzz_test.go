package kvstore

import (
	"errors"
	"testing"

	"github.com/rshub/rshub/hub"
)

// A mark either reads back as the mark whose String it is, or is refused
// with hub.ErrFeedLost, whatever the string.
func FuzzParseMark(f *testing.F) {
	for _, s := range []string{"0.0", "12.7", "18446744073709551615.1", "", ".", "1.", "-1.2", "1.2.3", "x", " 1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMark(s)
		if err != nil {
			if !errors.Is(err, hub.ErrFeedLost) {
				t.Fatalf("parseMark(%q): %v, not ErrFeedLost", s, err)
			}
			return
		}
		if back, err := parseMark(m.String()); err != nil || back != m {
			t.Fatalf("parseMark(%q) = %v, which reads back as %v, %v", s, m, back, err)
		}
	})
}
