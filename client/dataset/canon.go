package dataset

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// Canonical returns quads with their blank nodes relabelled canonically
// ("c0", "c1", …), sorted and without duplicates: two datasets are equal
// up to blank node relabelling (isomorphic) exactly when their canonical
// forms are equal.
//
// The labelling splits the blank nodes into connected components (nodes
// that share a quad), and labels each component by iterative hash
// refinement (each node's colour is refined by the colours of its
// neighbours through the quads they share, until the partition is
// stable); when nodes stay tied (symmetries, regular structures) each
// member of the first tied class is individualised in turn, refined
// again, and the lexicographically smallest outcome is kept — exhaustive,
// so the result does not depend on the input labels. Components are then
// ordered by their canonical text and numbered in that order.
func Canonical(quads []Quad) []Quad {
	var ground []Quad
	byNode := map[string][]int{}
	var withBlank []Quad
	for _, q := range quads {
		if !hasBlank(q) {
			ground = append(ground, q)
			continue
		}
		i := len(withBlank)
		withBlank = append(withBlank, q)
		for _, t := range [...]Term{q.S, q.O, q.G} {
			if t.Kind == Blank && (len(byNode[t.Value]) == 0 || byNode[t.Value][len(byNode[t.Value])-1] != i) {
				byNode[t.Value] = append(byNode[t.Value], i)
			}
		}
	}
	type comp struct {
		text string // sorted lines, blank nodes labelled l0, l1, … locally
	}
	var comps []comp
	for _, c := range components(withBlank, byNode) {
		qs := make([]Quad, len(c))
		for i, j := range c {
			qs[i] = withBlank[j]
		}
		lines := canonComponent(qs)
		comps = append(comps, comp{text: strings.Join(lines, "\n")})
	}
	slices.SortFunc(comps, func(a, b comp) int { return strings.Compare(a.text, b.text) })
	out := slices.Clone(ground)
	next := 0
	for _, c := range comps {
		local := map[string]string{}
		_ = ReadQuads(strings.NewReader(c.text), func(q Quad) error {
			for _, t := range [...]*Term{&q.S, &q.O, &q.G} {
				if t.Kind == Blank {
					l, ok := local[t.Value]
					if !ok {
						l = "c" + strconv.Itoa(next)
						next++
						local[t.Value] = l
					}
					t.Value = l
				}
			}
			out = append(out, q)
			return nil
		})
	}
	slices.SortFunc(out, func(a, b Quad) int { return strings.Compare(a.String(), b.String()) })
	return slices.CompactFunc(out, func(a, b Quad) bool { return a == b })
}

// Isomorphic reports whether two stores hold the same quads up to blank
// node relabelling.
func Isomorphic(a, b *Store) bool {
	if a.Len() != b.Len() {
		return false
	}
	ca, cb := Canonical(a.Quads()), Canonical(b.Quads())
	return slices.Equal(ca, cb)
}

func hasBlank(q Quad) bool { return q.S.Kind == Blank || q.O.Kind == Blank || q.G.Kind == Blank }

// components groups the quads by connected blank nodes (union-find).
func components(quads []Quad, byNode map[string][]int) [][]int {
	parent := make([]int, len(quads))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, idx := range byNode {
		for _, j := range idx[1:] {
			parent[find(j)] = find(idx[0])
		}
	}
	groups := map[int][]int{}
	var roots []int
	for i := range quads {
		r := find(i)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	out := make([][]int, 0, len(roots))
	for _, r := range roots {
		out = append(out, groups[r])
	}
	return out
}

// canonComponent labels one connected component's blank nodes l0, l1, …
// canonically and returns its sorted lines.
func canonComponent(quads []Quad) []string {
	var nodes []string
	seen := map[string]bool{}
	for _, q := range quads {
		for _, t := range [...]Term{q.S, q.O, q.G} {
			if t.Kind == Blank && !seen[t.Value] {
				seen[t.Value] = true
				nodes = append(nodes, t.Value)
			}
		}
	}
	c := &canonizer{quads: quads, nodes: nodes, index: map[string]int{}}
	for i, n := range nodes {
		c.index[n] = i
	}
	c.touch = make([][]int, len(nodes))
	for qi, q := range quads {
		for _, t := range [...]Term{q.S, q.O, q.G} {
			if t.Kind == Blank {
				i := c.index[t.Value]
				if l := c.touch[i]; len(l) == 0 || l[len(l)-1] != qi {
					c.touch[i] = append(c.touch[i], qi)
				}
			}
		}
	}
	c.shapes()
	colours := c.refine(make([]uint64, len(nodes)))
	c.search(colours)
	return c.best
}

type canonizer struct {
	quads []Quad
	set   map[string]bool // the quads' lines
	nodes []string
	index map[string]int
	touch [][]int  // node -> quads it is in
	shape []uint64 // quad -> hash with blank nodes masked
	at    [][3]int // quad -> node at S, O, G (-1: none)
	best  []string
}

// refine iterates hash refinement until the number of colours is stable:
// a node's next colour mixes its colour with the sorted signatures of its
// quads (the quad's shape, and at each blank position "self" or the
// colour there).
func (c *canonizer) refine(colours []uint64) []uint64 {
	classes := countDistinct(colours)
	sigs := make([]uint64, 0, 16)
	for {
		next := make([]uint64, len(colours))
		for i := range c.nodes {
			sigs = sigs[:0]
			for _, qi := range c.touch[i] {
				h := c.shape[qi]
				for pos, n := range c.at[qi] {
					switch {
					case n < 0:
					case n == i:
						h = mix(h, uint64(pos)+1, selfMark)
					default:
						h = mix(h, uint64(pos)+1, colours[n])
					}
				}
				sigs = append(sigs, h)
			}
			slices.Sort(sigs)
			h := mix(colours[i], uint64(len(sigs)), 0)
			for _, s := range sigs {
				h = mix(h, s, 1)
			}
			next[i] = h
		}
		n := countDistinct(next)
		colours = next
		if n <= classes {
			return colours
		}
		classes = n
	}
}

// selfMark stands for the node being coloured in its own quads.
const selfMark = 0x5bd1e9955bd1e995

// mix combines a hash with two values (a splitmix64 finaliser).
func mix(h, a, b uint64) uint64 {
	h ^= a*0x9e3779b97f4a7c15 + b + (h << 6) + (h >> 2)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// shapes computes each quad's hash with its blank nodes masked, and which
// node sits at each blank position.
func (c *canonizer) shapes() {
	c.shape = make([]uint64, len(c.quads))
	c.at = make([][3]int, len(c.quads))
	for qi, q := range c.quads {
		c.at[qi] = [3]int{-1, -1, -1}
		for pos, t := range [...]*Term{&q.S, &q.O, &q.G} {
			if t.Kind == Blank {
				c.at[qi][pos] = c.index[t.Value]
				t.Value = ""
			}
		}
		f := fnv.New64a()
		f.Write([]byte(q.String()))
		c.shape[qi] = f.Sum64()
	}
}

// search individualises tied nodes until every node has its own colour,
// keeping the smallest labelling.
func (c *canonizer) search(colours []uint64) {
	count := map[uint64]int{}
	for _, col := range colours {
		count[col]++
	}
	var tied uint64
	found := false
	for _, col := range colours {
		if count[col] > 1 && (!found || col < tied) {
			tied, found = col, true
		}
	}
	if !found {
		c.leaf(colours)
		return
	}
	var tried []int
	for i, col := range colours {
		if col != tied || slices.ContainsFunc(tried, func(j int) bool { return c.swapIsAutomorphism(i, j) }) {
			continue
		}
		tried = append(tried, i)
		next := slices.Clone(colours)
		next[i] = colours[i] ^ 0x9e3779b97f4a7c15
		c.search(c.refine(next))
	}
}

// leaf labels nodes by colour order and keeps the result if smallest.
func (c *canonizer) leaf(colours []uint64) {
	order := make([]int, len(c.nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case colours[a] < colours[b]:
			return -1
		case colours[a] > colours[b]:
			return 1
		}
		return 0
	})
	label := make([]string, len(c.nodes))
	for rank, i := range order {
		label[i] = "l" + strconv.Itoa(rank)
	}
	lines := make([]string, 0, len(c.quads))
	for _, q := range c.quads {
		for _, t := range [...]*Term{&q.S, &q.O, &q.G} {
			if t.Kind == Blank {
				t.Value = label[c.index[t.Value]]
			}
		}
		lines = append(lines, q.String())
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	if c.best == nil || slices.Compare(lines, c.best) < 0 {
		c.best = lines
	}
}

func countDistinct(colours []uint64) int {
	m := make(map[uint64]struct{}, len(colours))
	for _, c := range colours {
		m[c] = struct{}{}
	}
	return len(m)
}

// swapIsAutomorphism reports whether exchanging nodes i and j maps the
// component onto itself: then individualising either gives the same
// labellings, and the search tries only one (a sound pruning that keeps
// stars and other sets of interchangeable nodes linear).
func (c *canonizer) swapIsAutomorphism(i, j int) bool {
	if c.set == nil {
		c.set = make(map[string]bool, len(c.quads))
		for _, q := range c.quads {
			c.set[q.String()] = true
		}
	}
	a, b := c.nodes[i], c.nodes[j]
	for _, list := range [][]int{c.touch[i], c.touch[j]} {
		for _, qi := range list {
			q := c.quads[qi]
			for _, t := range [...]*Term{&q.S, &q.O, &q.G} {
				if t.Kind == Blank && t.Value == a {
					t.Value = b
				} else if t.Kind == Blank && t.Value == b {
					t.Value = a
				}
			}
			if !c.set[q.String()] {
				return false
			}
		}
	}
	return true
}
