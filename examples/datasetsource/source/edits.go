package source

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rshub/rshub/client/dataset"
)

// initialNQuads is the dataset patch 1 loads.
//
//go:embed initial.nq
var initialNQuads string

// Vocabulary of the generated quads.
const (
	dataNS    = "http://example.org/clusius/"
	schemaNS  = "http://schema.org/"
	rdfType   = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
	xsdNS     = "http://www.w3.org/2001/XMLSchema#"
	poolSize  = 300 // subjects edits choose from, so they meet again
	graphPool = 3
)

// initialStore returns the initial dataset.
func initialStore() (*dataset.Store, error) {
	var s dataset.Store
	if err := s.Load(strings.NewReader(initialNQuads)); err != nil {
		return nil, fmt.Errorf("datasetsource: initial dataset: %w", err)
	}
	return &s, nil
}

// edit returns the quads edit k adds and retracts from cur: quads changes
// in all, about two in five retractions of existing quads (none while the
// dataset is small), the rest additions of quads cur does not hold. The
// choice is a function of (seed, k) only, so a Source restarted from its
// directory makes the same edits.
func edit(cur *dataset.Store, seed uint64, k, quads int) (add, retract []dataset.Quad, err error) {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	lines := cur.Lines()
	retracted := map[int]bool{}
	added := map[string]bool{}
	for range quads {
		if len(lines)-len(retracted) > 20 && rng.IntN(5) < 2 {
			i := rng.IntN(len(lines))
			for retracted[i] {
				i = (i + 1) % len(lines)
			}
			retracted[i] = true
			q, err := dataset.ParseQuad(lines[i])
			if err != nil {
				return nil, nil, fmt.Errorf("datasetsource: the store holds a line it cannot read: %w", err)
			}
			retract = append(retract, q)
			continue
		}
		for try := 0; try < 100; try++ {
			q := randomQuad(rng, k)
			if key := q.String(); !cur.Has(q) && !added[key] {
				added[key] = true
				add = append(add, q)
				break
			}
		}
	}
	return add, retract, nil
}

func iri(v string) dataset.Term { return dataset.Term{Kind: dataset.IRI, Value: v} }

func blank(label string) dataset.Term { return dataset.Term{Kind: dataset.Blank, Value: label} }

func lit(v, datatype, lang string) dataset.Term {
	return dataset.Term{Kind: dataset.Literal, Value: v, Datatype: datatype, Lang: lang}
}

// randomQuad returns a quad about a subject of the pool (or a blank node
// of edit k), in the default graph or one of a few named graphs.
func randomQuad(rng *rand.Rand, k int) dataset.Quad {
	names := [...]string{"Clusius", "Camerarius", "Ortelius", "Plantin", "Lipsius", "Brimeu", "Dodoens", "Lobelius"}
	langs := [...]string{"", "en", "nl", "la", "fr", "de"}
	classes := [...]string{"Persons", "Places", "Letters", "Plants"}
	words := [...]string{"tulip", "bulb", "garden", "letter", "seed", "Hortus", "Leiden", "Wien", "Frankfurt", "é", "ü", "\"quoted\"", "back\\slash", "line\nbreak", "tab\tbed"}
	var q dataset.Quad
	if rng.IntN(6) == 0 {
		q.S = blank(fmt.Sprintf("e%dn%d", k, rng.IntN(3)))
	} else {
		q.S = iri(fmt.Sprintf("%sEntity_%05d", dataNS, rng.IntN(poolSize)))
	}
	switch rng.IntN(8) {
	case 0:
		q.P, q.O = iri(rdfType), iri(dataNS+classes[rng.IntN(len(classes))])
	case 1:
		q.P, q.O = iri(schemaNS+"name"), lit(names[rng.IntN(len(names))]+" "+fmt.Sprint(rng.IntN(1000)), "", langs[rng.IntN(len(langs))])
	case 2:
		q.P, q.O = iri(schemaNS+"dateCreated"), lit(fmt.Sprintf("%04d-%02d-%02d", 1550+rng.IntN(60), 1+rng.IntN(12), 1+rng.IntN(28)), xsdNS+"date", "")
	case 3:
		q.P, q.O = iri(schemaNS+"knows"), iri(fmt.Sprintf("%sEntity_%05d", dataNS, rng.IntN(poolSize)))
	case 4:
		q.P, q.O = iri(schemaNS+"address"), blank(fmt.Sprintf("e%dn%d", k, rng.IntN(3)))
	case 5:
		q.P, q.O = iri(schemaNS+"numberOfPages"), lit(fmt.Sprint(1+rng.IntN(40)), xsdNS+"integer", "")
	default:
		q.P, q.O = iri(schemaNS+"description"), lit(words[rng.IntN(len(words))]+" "+words[rng.IntN(len(words))], "", "")
	}
	if g := rng.IntN(graphPool + 2); g < graphPool {
		q.G = iri(fmt.Sprintf("%sgraph/g%d", dataNS, g))
	}
	return q
}
