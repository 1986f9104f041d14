package dataset

import (
	"fmt"
	"slices"
	"strings"

	"github.com/piprate/json-gold/ld"
)

// Canonical returns quads canonicalised by the W3C RDF Dataset
// Canonicalization algorithm (URDNA2015, through json-gold): blank nodes
// relabelled canonically ("c14n0", "c14n1", …), sorted and without
// duplicates. Two datasets are equal up to blank node relabelling
// (isomorphic) exactly when their canonical forms are equal. It fails only
// for a quad the algorithm's N-Quads reader refuses.
func Canonical(quads []Quad) ([]Quad, error) {
	var b strings.Builder
	for _, q := range quads {
		b.WriteString(q.String())
		b.WriteByte('\n')
	}
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.InputFormat = "application/n-quads"
	opts.Format = "application/n-quads"
	out, err := ld.NewJsonLdProcessor().Normalize(b.String(), opts)
	if err != nil {
		return nil, fmt.Errorf("dataset: canonicalise: %w", err)
	}
	text, ok := out.(string)
	if !ok {
		return nil, fmt.Errorf("dataset: canonicalise: got %T, want N-Quads", out)
	}
	var canon []Quad
	if err := ReadQuads(strings.NewReader(text), func(q Quad) error { canon = append(canon, q); return nil }); err != nil {
		return nil, fmt.Errorf("dataset: canonicalise: %w", err)
	}
	slices.SortFunc(canon, func(a, b Quad) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(canon, func(a, b Quad) bool { return a == b }), nil
}

// Isomorphic reports whether two stores hold the same quads up to blank
// node relabelling.
func Isomorphic(a, b *Store) (bool, error) {
	if a.Len() != b.Len() {
		return false, nil
	}
	ca, err := Canonical(a.Quads())
	if err != nil {
		return false, err
	}
	cb, err := Canonical(b.Quads())
	if err != nil {
		return false, err
	}
	return slices.Equal(ca, cb), nil
}
