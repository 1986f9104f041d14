package follow

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Snapshot is a Resource List as a follower remembers it, in little memory:
// per resource, a hash of its location (the key), a fingerprint of its
// state (lastmod, hash, length) and its location after a common prefix
// (for a deletion), in rows sorted by key. At is the Resource List's time.
type Snapshot struct {
	At     time.Time
	prefix string
	rows   []row
	arena  []byte
}

// row is one resource of a Snapshot: 24 bytes and its location's suffix.
type row struct {
	key, fp uint64
	off, n  uint32
}

// Len is the number of resources.
func (s *Snapshot) Len() int { return len(s.rows) }

// find returns the index of key's row, or -1.
func (s *Snapshot) find(key uint64) int {
	i, ok := slices.BinarySearchFunc(s.rows, key, func(r row, k uint64) int {
		switch {
		case r.key < k:
			return -1
		case r.key > k:
			return 1
		}
		return 0
	})
	if !ok {
		return -1
	}
	return i
}

// SnapshotBuilder makes the next Snapshot from a Resource List's entries as
// they stream, and diffs it with the previous one (nil: a baseline, no
// changes) as it goes: each entry is classified when added.
type SnapshotBuilder struct {
	prev  *Snapshot
	next  Snapshot
	seen  []uint64 // bit set over prev's rows
	diffs []Diff
}

// Diff is one change between two Snapshots: created, updated or deleted,
// and where its location is (in the new Snapshot, or the old one for a
// deletion).
type Diff struct {
	Change changefeed.Change
	off, n uint32
}

// NewSnapshotBuilder starts a Snapshot of locations under prefix (shared
// prefixes are stored once), diffed against prev.
func NewSnapshotBuilder(prev *Snapshot, prefix string) *SnapshotBuilder {
	b := &SnapshotBuilder{prev: prev, next: Snapshot{prefix: prefix}}
	if prev != nil {
		b.seen = make([]uint64, (len(prev.rows)+63)/64)
		b.next.rows = make([]row, 0, len(prev.rows))
	}
	return b
}

func locKey(loc string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(loc))
	return h.Sum64()
}

// fingerprint hashes what tells one state of a resource from another.
func fingerprint(e *changefeed.Entry) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(e.LastMod.Time.UTC().Format(time.RFC3339Nano)))
	if e.MD != nil {
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(e.MD.Hash))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(strconv.FormatInt(e.MD.Length, 10)))
	}
	return h.Sum64()
}

// Len is the number of resources added so far.
func (b *SnapshotBuilder) Len() int { return len(b.next.rows) }

// Add takes the next entry of the Resource List (a location listed twice
// counts once, the first time).
func (b *SnapshotBuilder) Add(e *changefeed.Entry) {
	key := locKey(e.Loc)
	suffix, ok := strings.CutPrefix(e.Loc, b.next.prefix)
	if !ok {
		suffix = "\x00" + e.Loc // stored whole (see locAt)
	}
	r := row{key: key, fp: fingerprint(e), off: uint32(len(b.next.arena)), n: uint32(len(suffix))}
	b.next.arena = append(b.next.arena, suffix...)
	b.next.rows = append(b.next.rows, r)
	if b.prev == nil {
		return
	}
	switch i := b.prev.find(key); {
	case i < 0:
		b.diffs = append(b.diffs, Diff{Change: changefeed.Created, off: r.off, n: r.n})
	case b.seen[i/64]&(1<<(i%64)) != 0:
		b.next.rows = b.next.rows[:len(b.next.rows)-1] // listed twice
	default:
		b.seen[i/64] |= 1 << (i % 64)
		if b.prev.rows[i].fp != r.fp {
			b.diffs = append(b.diffs, Diff{Change: changefeed.Updated, off: r.off, n: r.n})
		}
	}
}

// Build ends the Snapshot, taken at at, and returns it with the changes
// since the previous one, deletions last.
func (b *SnapshotBuilder) Build(at time.Time) (*Snapshot, []Diff) {
	if b.prev != nil {
		for i, r := range b.prev.rows {
			if b.seen[i/64]&(1<<(i%64)) == 0 {
				b.diffs = append(b.diffs, Diff{Change: changefeed.Deleted, off: r.off, n: r.n})
			}
		}
	}
	next := &b.next
	next.At = at
	slices.SortFunc(next.rows, func(a, c row) int {
		switch {
		case a.key < c.key:
			return -1
		case a.key > c.key:
			return 1
		}
		return 0
	})
	// a location listed twice counts once
	next.rows = slices.CompactFunc(next.rows, func(a, c row) bool { return a.key == c.key })
	return next, b.diffs
}

// Loc returns the location of a change between prev and next, the
// Snapshots it was found between.
func (d Diff) Loc(prev, next *Snapshot) string {
	if d.Change == changefeed.Deleted {
		return prev.locAt(d.off, d.n)
	}
	return next.locAt(d.off, d.n)
}

func (s *Snapshot) locAt(off, n uint32) string {
	v := string(s.arena[off : off+n])
	if rest, ok := strings.CutPrefix(v, "\x00"); ok {
		return rest
	}
	return s.prefix + v
}
