package gcgov

import "testing"

func TestReleaseDue(t *testing.T) {
	const mib = 1 << 20
	big := memState{live: 200 * mib, objects: 300 * mib, free: 100 * mib} // 200 MiB beyond live
	for name, c := range map[string]struct {
		m                             memState
		sinceTick, sinceRelease, then uint64
		want                          bool
	}{
		"quiet, 200 MiB retained beyond a 200 MiB live heap, never released": {big, 1 * mib, 500 * mib, 0, true},
		"busy: a sixteenth of the live heap allocated in the tick":           {big, 200 * mib / 16, 500 * mib, 0, false},
		"released, and less than a cycle's worth allocated since":            {big, 1 * mib, 150 * mib, 200 * mib, false},
		"released, and a cycle's worth allocated since":                      {big, 1 * mib, 200 * mib, 200 * mib, true},
		"a small heap: less than 64 MiB retained": {
			memState{live: 40 * mib, objects: 60 * mib, free: 40 * mib}, 0, 500 * mib, 0, false},
		"a big heap with little beyond it: less than a quarter of live retained": {
			memState{live: 1000 * mib, objects: 1100 * mib, free: 100 * mib}, 0, 5000 * mib, 0, false},
		"no collection yet": {memState{objects: 300 * mib}, 0, 500 * mib, 0, false},
	} {
		if got := releaseDue(c.m, c.sinceTick, c.sinceRelease, c.then); got != c.want {
			t.Errorf("%s: releaseDue = %v, want %v", name, got, c.want)
		}
	}
}
