package dataset_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/rshub/rshub/client/dataset"
)

// Applying a patch, as `diff --unified=0` of two sorted N-Quads files
// writes it, then exporting the dataset.
func ExampleStore_ApplyPatch() {
	var s dataset.Store
	_, err := s.ApplyPatch(strings.NewReader(`--- old.nq
+++ new.nq
@@ -1 +1,2 @@
-<http://example.org/place/1> <http://example.org/country> "The Netherland" .
+<http://example.org/place/1> <http://example.org/country> "The Netherlands" .
+<http://example.org/place/1> <http://example.org/latitude> "5200951"^^<http://schema.org/latitude> .
`))
	if err != nil {
		fmt.Println(err)
	}
	_ = s.Export(os.Stdout)
	// Output:
	// <http://example.org/place/1> <http://example.org/country> "The Netherlands" .
	// <http://example.org/place/1> <http://example.org/latitude> "5200951"^^<http://schema.org/latitude> .
}

// Two datasets that differ only in their blank node labels are equal.
func ExampleIsomorphic() {
	load := func(nq string) *dataset.Store {
		var s dataset.Store
		_ = s.Load(strings.NewReader(nq))
		return &s
	}
	a := load("_:a <http://example.org/knows> _:b .\n_:b <http://example.org/name> \"Bob\" .\n")
	b := load("_:x <http://example.org/name> \"Bob\" .\n_:y <http://example.org/knows> _:x .\n")
	c := load("_:x <http://example.org/name> \"Bob\" .\n_:x <http://example.org/knows> _:y .\n")
	ab, _ := dataset.Isomorphic(a, b)
	ac, _ := dataset.Isomorphic(a, c)
	fmt.Println(ab, ac)
	// Output: true false
}

// The media type of a dataset file: its rs:md type when it names a
// format, else its extension.
func ExampleMediaType() {
	fmt.Println(dataset.MediaType("http://example.org/dataset.nq", ""))
	fmt.Println(dataset.MediaType("http://example.org/dataset.nq", "text/turtle"))
	fmt.Println(dataset.MediaType("http://example.org/changes/1.nqud", ""))
	// Output:
	// application/n-quads
	// text/turtle
	// application/vnd.timbuctoo-rdf.nquads_unified_diff
}
