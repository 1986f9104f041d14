package dataset

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Store is a set of quads, held as their canonical N-Quads lines. The zero
// Store is empty and ready to use; it is not safe for concurrent use.
type Store struct {
	quads map[string]struct{}
}

// Len returns how many quads the store holds.
func (s *Store) Len() int { return len(s.quads) }

// Has reports whether the store holds q.
func (s *Store) Has(q Quad) bool {
	_, ok := s.quads[q.String()]
	return ok
}

// Add adds q; adding a quad the store holds changes nothing.
func (s *Store) Add(q Quad) {
	if s.quads == nil {
		s.quads = map[string]struct{}{}
	}
	s.quads[q.String()] = struct{}{}
}

// Retract removes q; retracting a quad the store does not hold changes
// nothing.
func (s *Store) Retract(q Quad) { delete(s.quads, q.String()) }

// Apply applies one patch change.
func (s *Store) Apply(c Change) {
	if c.Op == Add {
		s.Add(c.Quad)
	} else {
		s.Retract(c.Quad)
	}
}

// ApplyPatch applies a whole N-Quads Unified Diff, change by change, and
// returns how many changes it read. Applying the same patch twice leaves
// the store as once (every change is an idempotent set operation). On a
// syntax error, the changes before the bad line are applied.
func (s *Store) ApplyPatch(r io.Reader) (int, error) {
	n := 0
	err := ReadPatch(r, func(c Change) error {
		s.Apply(c)
		n++
		return nil
	})
	return n, err
}

// Quads returns the store's quads, in canonical line order.
func (s *Store) Quads() []Quad {
	lines := s.Lines()
	out := make([]Quad, 0, len(lines))
	for _, l := range lines {
		if q, err := ParseQuad(l); err == nil {
			out = append(out, q)
		}
	}
	return out
}

// Load adds every quad of an N-Quads (or N-Triples) document.
func (s *Store) Load(r io.Reader) error {
	return ReadQuads(r, func(q Quad) error { s.Add(q); return nil })
}

// Lines returns the store's quads as canonical N-Quads lines, sorted.
func (s *Store) Lines() []string {
	out := make([]string, 0, len(s.quads))
	for l := range s.quads {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// Export writes the store as sorted canonical N-Quads, one quad a line:
// two stores with the same quads (and the same blank node labels) export
// the same bytes.
func (s *Store) Export(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, l := range s.Lines() {
		if _, err := bw.WriteString(l); err != nil {
			return fmt.Errorf("dataset: export: %w", err)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return fmt.Errorf("dataset: export: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: export: %w", err)
	}
	return nil
}

// Diff returns the N-Quads Unified Diff that turns from into to: what
// `diff --unified=0` of the two sorted exports gives, without the file
// headers (a "-" line per quad only in from, a "+" line per quad only in
// to, in sorted order).
func Diff(from, to *Store) string {
	var b strings.Builder
	a, c := from.Lines(), to.Lines()
	i, j := 0, 0
	for i < len(a) || j < len(c) {
		switch {
		case j == len(c) || i < len(a) && a[i] < c[j]:
			b.WriteString("-" + a[i] + "\n")
			i++
		case i == len(a) || c[j] < a[i]:
			b.WriteString("+" + c[j] + "\n")
			j++
		default:
			i++
			j++
		}
	}
	return b.String()
}
