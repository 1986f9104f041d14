package dataset

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func blank(s string) Term { return Term{Kind: Blank, Value: s} }

// edges makes a symmetric blank-node graph: _:a <p> _:b and back.
func edges(pairs ...[2]int) []Quad {
	var out []Quad
	for _, e := range pairs {
		a, b := blank(fmt.Sprint("n", e[0])), blank(fmt.Sprint("n", e[1]))
		out = append(out, Quad{S: a, P: iri("http://a/p"), O: b}, Quad{S: b, P: iri("http://a/p"), O: a})
	}
	return out
}

func cycle(n, offset int) [][2]int {
	var out [][2]int
	for i := range n {
		out = append(out, [2]int{offset + i, offset + (i+1)%n})
	}
	return out
}

// relabel renames every blank node at random and shuffles the quads.
func relabel(rng *rand.Rand, quads []Quad) []Quad {
	names := map[string]string{}
	perm := rng.Perm(10000)
	out := slices.Clone(quads)
	for i := range out {
		for _, t := range [...]*Term{&out[i].S, &out[i].O, &out[i].G} {
			if t.Kind != Blank {
				continue
			}
			if _, ok := names[t.Value]; !ok {
				names[t.Value] = fmt.Sprint("r", perm[len(names)])
			}
			t.Value = names[t.Value]
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// canonical is Canonical failing the test on an error.
func canonical(t *testing.T, quads []Quad) []Quad {
	t.Helper()
	c, err := Canonical(quads)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// isomorphic is Isomorphic failing the test on an error.
func isomorphic(t *testing.T, a, b *Store) bool {
	t.Helper()
	ok, err := Isomorphic(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func storeOf(quads []Quad) *Store {
	var s Store
	for _, q := range quads {
		s.Add(q)
	}
	return &s
}

func TestCanonical_RelabellingDoesNotMatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	prism := edges(append(cycle(3, 0), append(cycle(3, 3), [2]int{0, 3}, [2]int{1, 4}, [2]int{2, 5})...)...)
	star := edges(func() (e [][2]int) {
		for i := 1; i <= 60; i++ {
			e = append(e, [2]int{0, i})
		}
		return e
	}()...)
	graphs := map[string][]Quad{
		"prism":         prism,
		"cycle of 40":   edges(cycle(40, 0)...),
		"star of 60":    star,
		"two triangles": edges(append(cycle(3, 0), cycle(3, 3)...)...),
		"graph names": {
			{S: iri("http://a/s"), P: iri("http://a/p"), O: blank("x"), G: blank("g1")},
			{S: blank("x"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "v"}, G: blank("g2")},
			{S: blank("y"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "v"}, G: blank("g1")},
		},
		"isolated twins": {
			{S: blank("a"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "same"}},
			{S: blank("b"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "same"}},
			{S: blank("c"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "same"}},
		},
	}
	for name, g := range graphs {
		start := time.Now()
		want := canonical(t, g)
		for range 20 {
			if got := canonical(t, relabel(rng, g)); !slices.Equal(got, want) {
				t.Fatalf("%s: canonical form depends on the labels:\n%v\n%v", name, got, want)
			}
		}
		if !isomorphic(t, storeOf(g), storeOf(relabel(rng, g))) {
			t.Errorf("%s: not isomorphic to its relabelling", name)
		}
		// A guard against an exponential search, not a speed figure: a
		// blow-up takes minutes, a loaded machine under -race seconds.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: %s for 21 labellings", name, d)
		}
	}
}

// Pairs that colour refinement alone cannot tell apart (both sides
// regular, same degrees) must still compare unequal.
func TestCanonical_RegularGraphsThatRefinementCannotSplit(t *testing.T) {
	prism := edges(append(cycle(3, 0), append(cycle(3, 3), [2]int{0, 3}, [2]int{1, 4}, [2]int{2, 5})...)...)
	k33 := edges([2]int{0, 3}, [2]int{0, 4}, [2]int{0, 5}, [2]int{1, 3}, [2]int{1, 4}, [2]int{1, 5}, [2]int{2, 3}, [2]int{2, 4}, [2]int{2, 5})
	hexagon := edges(cycle(6, 0)...)
	triangles := edges(append(cycle(3, 0), cycle(3, 3)...)...)
	for _, c := range []struct {
		name string
		a, b []Quad
	}{{"prism / K3,3", prism, k33}, {"hexagon / two triangles", hexagon, triangles}} {
		if len(c.a) != len(c.b) && c.name != "prism / K3,3" {
			t.Fatalf("%s: sizes %d %d", c.name, len(c.a), len(c.b))
		}
		if slices.Equal(canonical(t, c.a), canonical(t, c.b)) || isomorphic(t, storeOf(c.a), storeOf(c.b)) {
			t.Errorf("%s: compared equal", c.name)
		}
	}
}

func TestIsomorphic_GroundQuadsAndBlankNodesBothCount(t *testing.T) {
	a := []Quad{{S: iri("http://a/s"), P: iri("http://a/p"), O: blank("x")}, {S: blank("x"), P: iri("http://a/q"), O: Term{Kind: Literal, Value: "1"}}}
	b := []Quad{{S: iri("http://a/s"), P: iri("http://a/p"), O: blank("y")}, {S: blank("y"), P: iri("http://a/q"), O: Term{Kind: Literal, Value: "1"}}}
	c := []Quad{{S: iri("http://a/s"), P: iri("http://a/p"), O: blank("y")}, {S: blank("z"), P: iri("http://a/q"), O: Term{Kind: Literal, Value: "1"}}}
	if !isomorphic(t, storeOf(a), storeOf(b)) {
		t.Error("a and b differ only in labels")
	}
	if isomorphic(t, storeOf(a), storeOf(c)) {
		t.Error("c splits the blank node in two")
	}
}
