package rldiff

import (
	"bufio"
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultRunSize is how many items a Sorter holds in memory before it
// spills them, sorted, to a run file: about 10 MB of items with URLs of
// typical length.
const DefaultRunSize = 64 << 10

// Sorter builds a snapshot from items given in any order. Add every item,
// then Finish; Abort (or a failed Finish) removes what it wrote. A Sorter
// is not safe for concurrent use.
type Sorter struct {
	dir     string
	runSize int
	buf     []Item
	runs    []string
	scratch []byte
	err     error
}

// NewSorter returns a Sorter that writes its run files in dir, holding at
// most runSize items in memory (DefaultRunSize when runSize <= 0).
func NewSorter(dir string, runSize int) *Sorter {
	if runSize <= 0 {
		runSize = DefaultRunSize
	}
	return &Sorter{dir: dir, runSize: runSize}
}

// Add adds one item.
func (s *Sorter) Add(it Item) error {
	if s.err != nil {
		return s.err
	}
	s.buf = append(s.buf, it)
	if len(s.buf) >= s.runSize {
		s.err = s.spill()
	}
	return s.err
}

// byLoc orders items by loc, then by lastmod, hash and length, so that of
// a loc listed twice the newest comes last (and of two equally new ones,
// always the same one).
func byLoc(a, b Item) int {
	if c := strings.Compare(a.Loc, b.Loc); c != 0 {
		return c
	}
	if c := a.LastMod.Compare(b.LastMod); c != 0 {
		return c
	}
	if c := strings.Compare(a.Hash, b.Hash); c != 0 {
		return c
	}
	return cmp.Compare(a.Length, b.Length)
}

// spill writes the buffered items, sorted, to a new run file.
func (s *Sorter) spill() error {
	slices.SortFunc(s.buf, byLoc)
	f, err := os.CreateTemp(s.dir, "rldiff-run-*")
	if err != nil {
		return fmt.Errorf("rldiff: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	w := bufio.NewWriterSize(f, 64<<10)
	for _, it := range s.buf {
		if s.scratch, err = writeItem(w, it, s.scratch); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rldiff: run %s: %w", f.Name(), err)
	}
	clear(s.buf)
	s.buf = s.buf[:0]
	return nil
}

// Finish writes the snapshot of every item added to path (replacing it
// atomically), one item per loc (the newest when a loc was listed twice,
// see byLoc), and returns how many items it holds.
func (s *Sorter) Finish(path string) (int, error) {
	defer s.Abort()
	if s.err != nil {
		return 0, s.err
	}
	if len(s.buf) > 0 || len(s.runs) == 0 {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rldiff-snapshot-*")
	if err != nil {
		return 0, fmt.Errorf("rldiff: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, removes nothing
	n, err := s.merge(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, fmt.Errorf("rldiff: %w", err)
	}
	return n, nil
}

// Abort removes the run files; the Sorter is then spent.
func (s *Sorter) Abort() {
	for _, r := range s.runs {
		_ = os.Remove(r)
	}
	s.runs, s.buf = nil, nil
	if s.err == nil {
		s.err = errors.New("rldiff: sorter finished")
	}
}

// merge writes the runs merged into one sorted stream to w.
func (s *Sorter) merge(w io.Writer) (int, error) {
	h := &runHeap{}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return 0, fmt.Errorf("rldiff: %w", err)
		}
		defer f.Close()
		r := newReader(f, name)
		it, err := r.next()
		switch {
		case errors.Is(err, io.EOF):
			continue
		case err != nil:
			return 0, err
		}
		h.runs = append(h.runs, run{r: r, head: it})
	}
	heap.Init(h)
	bw := bufio.NewWriterSize(w, 64<<10)
	var (
		n       int
		pending Item
		have    bool
		err     error
	)
	for h.Len() > 0 {
		top := &h.runs[0]
		it := top.head
		if top.head, err = top.r.next(); errors.Is(err, io.EOF) {
			heap.Pop(h)
		} else if err != nil {
			return 0, err
		} else {
			heap.Fix(h, 0)
		}
		if have && pending.Loc != it.Loc {
			if s.scratch, err = writeItem(bw, pending, s.scratch); err != nil {
				return 0, fmt.Errorf("rldiff: %w", err)
			}
			n++
		}
		pending, have = it, true // the last of a loc (newest lastmod) wins
	}
	if have {
		if s.scratch, err = writeItem(bw, pending, s.scratch); err != nil {
			return 0, fmt.Errorf("rldiff: %w", err)
		}
		n++
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("rldiff: %w", err)
	}
	return n, nil
}

// run is one run file being merged, with its next item.
type run struct {
	r    *reader
	head Item
}

// runHeap orders runs by their next item.
type runHeap struct{ runs []run }

func (h *runHeap) Len() int           { return len(h.runs) }
func (h *runHeap) Less(i, j int) bool { return byLoc(h.runs[i].head, h.runs[j].head) < 0 }
func (h *runHeap) Swap(i, j int)      { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap) Push(x any)         { h.runs = append(h.runs, x.(run)) }
func (h *runHeap) Pop() any {
	last := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return last
}
