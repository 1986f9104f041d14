package rldiff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// snapshotOf builds a snapshot of items with a small run size, so that
// several runs are merged.
func snapshotOf(t testing.TB, dir, name string, items []Item, runSize int) string {
	t.Helper()
	s := NewSorter(dir, runSize)
	for _, it := range items {
		if err := s.Add(it); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if _, err := s.Finish(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// reference is the diff computed with maps: the newest item of each loc.
func reference(old, cur []Item) map[string]changefeed.Change {
	last := func(items []Item) map[string]Item {
		m := map[string]Item{}
		for _, it := range items {
			if p, ok := m[it.Loc]; !ok || byLoc(p, it) < 0 {
				m[it.Loc] = it
			}
		}
		return m
	}
	o, n := last(old), last(cur)
	out := map[string]changefeed.Change{}
	for loc, it := range n {
		switch p, ok := o[loc]; {
		case !ok:
			out[loc] = changefeed.Created
		case !same(p, it):
			out[loc] = changefeed.Updated
		}
	}
	for loc := range o {
		if _, ok := n[loc]; !ok {
			out[loc] = changefeed.Deleted
		}
	}
	return out
}

func randomList(r *rand.Rand, n, space int) []Item {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	items := make([]Item, n)
	for i := range items {
		k := r.IntN(space)
		items[i] = Item{Loc: fmt.Sprintf("http://s.example/r/%d", k), LastMod: base.Add(time.Duration(r.IntN(3)) * time.Hour),
			Hash: fmt.Sprintf("md5:%d", r.IntN(2)), Length: int64(r.IntN(2))}
	}
	return items
}

// Every created, updated and deleted resource is found once, in loc order,
// whatever the order, duplicates and run boundaries of the lists.
func TestDiff_MatchesAMapBasedDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		dir := t.TempDir()
		old, cur := randomList(r, r.IntN(300), 200), randomList(r, r.IntN(300), 200)
		runSize := 1 + r.IntN(50)
		oldPath := snapshotOf(t, dir, "old", old, runSize)
		newPath := snapshotOf(t, dir, "new", cur, runSize)
		got := map[string]changefeed.Change{}
		var order []string
		counts, err := Diff(oldPath, newPath, func(c Change) error {
			if _, dup := got[c.Loc]; dup {
				t.Fatalf("round %d: %s reported twice", round, c.Loc)
			}
			got[c.Loc] = c.Change
			order = append(order, c.Loc)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := reference(old, cur)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d changes, want %d", round, len(got), len(want))
		}
		for loc, c := range want {
			if got[loc] != c {
				t.Fatalf("round %d: %s: %q, want %q", round, loc, got[loc], c)
			}
		}
		if !slices.IsSorted(order) {
			t.Fatalf("round %d: changes not in loc order", round)
		}
		if counts.Created+counts.Updated+counts.Deleted != len(want) {
			t.Fatalf("round %d: counts %+v for %d changes", round, counts, len(want))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("round %d: %d files left in the directory, want the two snapshots", round, len(entries))
		}
	}
}

// A first Resource List (no old snapshot) is all creations; a list equal
// to the last one is no change at all.
func TestDiff_FirstAndUnchangedLists(t *testing.T) {
	dir := t.TempDir()
	items := randomList(rand.New(rand.NewPCG(3, 4)), 100, 1000)
	path := snapshotOf(t, dir, "s", items, 7)
	c, err := Diff(filepath.Join(dir, "none"), path, func(Change) error { return nil })
	if err != nil || c.Created != len(reference(nil, items)) || c.Updated+c.Deleted != 0 {
		t.Fatalf("first list: %+v, %v", c, err)
	}
	c, err = Diff(path, path, func(ch Change) error { return fmt.Errorf("change %v in an equal list", ch) })
	if err != nil || c.Created+c.Updated+c.Deleted != 0 || c.Same != len(reference(nil, items)) {
		t.Fatalf("equal lists: %+v, %v", c, err)
	}
}

// Every field survives the snapshot file, a lastmod in any year included.
func TestSnapshot_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	items := []Item{
		{Loc: "http://s/a", Length: -1},
		{Loc: "http://s/b", LastMod: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Hash: "sha-256:ff", Length: 12},
		{Loc: "http://s/c", LastMod: time.Date(1, 1, 2, 0, 0, 0, 1, time.UTC), Length: 0},
	}
	path := snapshotOf(t, dir, "s", items, 2)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := newReader(f, path)
	for _, want := range items {
		got, err := r.next()
		if err != nil || got.Loc != want.Loc || !got.LastMod.Equal(want.LastMod) || got.Hash != want.Hash || got.Length != want.Length {
			t.Fatalf("read %+v, %v; want %+v", got, err, want)
		}
	}
}

// A damaged snapshot is an error naming it, never a panic or a huge
// allocation.
func FuzzSnapshotReader(f *testing.F) {
	dir := f.TempDir()
	good, err := os.ReadFile(snapshotOf(f, dir, "s", randomList(rand.New(rand.NewPCG(5, 6)), 20, 20), 4))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReader(bytes.NewReader(data), "fuzz")
		for {
			_, err := r.next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("error %v is not ErrDamaged", err)
				}
				return
			}
		}
	})
}
