package logcache

import (
	"fmt"
	"testing"
)

func TestEvictedIndex_BoundedAndNeverWrong(t *testing.T) {
	var x evictedIndex
	x.reset(11) // the follower starts at 11: nothing before it is known
	if x.clear("a", 10) || !x.clear("a", 11) {
		t.Fatal("start bound wrong")
	}
	// two evictions per channel, in sequence order, for more channels than the bound
	n := maxEvictedChannels + maxEvictedChannels/2
	seq := uint64(11)
	last := make([]uint64, n)
	for round := 0; round < 2; round++ {
		for i := range n {
			x.note(fmt.Sprint("ch", i), seq)
			last[i] = seq
			seq++
		}
	}
	if len(x.last) > maxEvictedChannels {
		t.Fatalf("index holds %d channels, bound %d", len(x.last), maxEvictedChannels)
	}
	forgotten := 0
	for i, l := range last {
		ch := fmt.Sprint("ch", i)
		if x.clear(ch, l) {
			t.Fatalf("%s: clear from its own evicted record %d", ch, l)
		}
		if !x.clear(ch, l+1) {
			forgotten++ // allowed: a forgotten channel counts as evicted at the floor
			if l+1 > x.floor {
				t.Fatalf("%s: not clear from %d above the floor %d", ch, l+1, x.floor)
			}
		}
	}
	if forgotten == 0 || forgotten == n {
		t.Fatalf("%d of %d channels forgotten: the bound did not work as meant", forgotten, n)
	}
}
