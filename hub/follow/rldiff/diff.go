package rldiff

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rshub/rshub/changefeed"
)

// Change is one difference between two snapshots: the resource's item as
// the newer snapshot has it (as the older one had it for a deletion).
type Change struct {
	Item
	Change changefeed.Change
}

// Counts tells how many changes of each kind a Diff found.
type Counts struct {
	Created, Updated, Deleted, Same int
}

// Diff reads the snapshots at oldPath and newPath side by side and calls
// emit for every resource created, updated or deleted between them, in
// loc order. A missing oldPath is an empty snapshot: every resource of the
// new one is created. It stops at the first error emit returns.
func Diff(oldPath, newPath string, emit func(Change) error) (Counts, error) {
	var c Counts
	oldR, closeOld, err := open(oldPath, true)
	if err != nil {
		return c, err
	}
	defer closeOld()
	newR, closeNew, err := open(newPath, false)
	if err != nil {
		return c, err
	}
	defer closeNew()

	o, oerr := oldR.next()
	n, nerr := newR.next()
	for {
		if oerr != nil && !errors.Is(oerr, io.EOF) {
			return c, oerr
		}
		if nerr != nil && !errors.Is(nerr, io.EOF) {
			return c, nerr
		}
		oDone, nDone := oerr != nil, nerr != nil
		if oDone && nDone {
			return c, nil
		}
		cmp := 0
		switch {
		case oDone:
			cmp = 1
		case nDone:
			cmp = -1
		default:
			cmp = strings.Compare(o.Loc, n.Loc)
		}
		var ch *Change
		switch {
		case cmp < 0: // only in the old snapshot
			ch = &Change{Item: o, Change: changefeed.Deleted}
			c.Deleted++
			o, oerr = oldR.next()
		case cmp > 0: // only in the new one
			ch = &Change{Item: n, Change: changefeed.Created}
			c.Created++
			n, nerr = newR.next()
		default:
			if same(o, n) {
				c.Same++
			} else {
				ch = &Change{Item: n, Change: changefeed.Updated}
				c.Updated++
			}
			o, oerr = oldR.next()
			n, nerr = newR.next()
		}
		if ch != nil {
			if err := emit(*ch); err != nil {
				return c, err
			}
		}
	}
}

// open opens a snapshot for reading; a missing file is an empty snapshot
// when missingOK.
func open(path string, missingOK bool) (*reader, func(), error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && missingOK {
		return newReader(strings.NewReader(""), path), func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("rldiff: %w", err)
	}
	return newReader(f, path), func() { f.Close() }, nil
}

// FromEntry is the Item of a Resource List entry.
func FromEntry(e *changefeed.Entry) Item {
	it := Item{Loc: e.Loc, LastMod: e.LastMod.Time, Length: -1}
	if e.MD != nil {
		it.Hash, it.Length = e.MD.Hash, e.MD.Length
	}
	return it
}
