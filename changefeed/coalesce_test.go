package changefeed

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// resource is what a destination knows of one resource.
type resource struct {
	hash     string
	datetime time.Time
}

// apply applies a notification's entries to state in order.
func apply(state map[string]resource, doc *Document) {
	for _, e := range doc.Entries {
		if e.MD.Change == Deleted {
			delete(state, e.Loc)
			continue
		}
		state[e.Loc] = resource{hash: e.MD.Hash, datetime: e.MD.DateTime.Time}
	}
}

func dt(t time.Time) DateTime { return DateTime{Time: t, Raw: t.Format(time.RFC3339)} }

// history makes n consecutive notifications of random changes to a few
// resources, consistent with state (created only when absent, updated or
// deleted only when present), advancing state as it goes.
func history(rng *rand.Rand, state map[string]resource, n int) []*Document {
	present := map[string]bool{}
	for loc := range state {
		present[loc] = true
	}
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []*Document
	for i := range n {
		d := &Document{Header: Header{Kind: URLSet, MD: MD{Capability: CapChangeNotification, Length: -1, From: dt(t)}}}
		for range rng.IntN(5) {
			t = t.Add(time.Duration(rng.IntN(3)) * time.Second)
			loc := fmt.Sprintf("http://example.org/r/%d", rng.IntN(6))
			change := Created
			if present[loc] {
				change = []Change{Updated, Deleted}[rng.IntN(2)]
			}
			present[loc] = change != Deleted
			md := &MD{Change: change, DateTime: dt(t), Hash: fmt.Sprintf("md5:%032x", uint64(i)<<20|uint64(rng.IntN(1000))), Length: -1}
			d.Entries = append(d.Entries, Entry{Loc: loc, MD: md})
		}
		t = t.Add(time.Second)
		d.MD.Until = dt(t)
		docs = append(docs, d)
	}
	return docs
}

func clone(m map[string]resource) map[string]resource {
	out := make(map[string]resource, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestCoalesce_SameStateAsEveryNotification is the property: for random
// starting states and histories, applying the coalesced notifications gives
// the state applying the originals gives.
func TestCoalesce_SameStateAsEveryNotification(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	for run := range 2000 {
		start := map[string]resource{}
		for i := range rng.IntN(6) {
			start[fmt.Sprintf("http://example.org/r/%d", i)] = resource{hash: "md5:00000000000000000000000000000000"}
		}
		docs := history(rng, start, 1+rng.IntN(8))
		want := clone(start)
		for _, d := range docs {
			apply(want, d)
		}
		max := 1 + rng.IntN(4)
		out, err := Coalesce(docs, max)
		if err != nil {
			t.Fatal(err)
		}
		got := clone(start)
		prevUntil := docs[0].MD.From
		for i, d := range out {
			if len(d.Entries) > max {
				t.Fatalf("run %d: notification %d has %d entries, max %d", run, i, len(d.Entries), max)
			}
			if d.MD.From.Time != prevUntil.Time {
				t.Fatalf("run %d: notification %d starts at %s, previous until %s", run, i, d.MD.From.Raw, prevUntil.Raw)
			}
			if err := Validate(d, Options{Mode: Strict}); err != nil {
				t.Fatalf("run %d: notification %d is not valid: %v", run, i, err)
			}
			prevUntil = d.MD.Until
			apply(got, d)
		}
		if prevUntil.Time != docs[len(docs)-1].MD.Until.Time {
			t.Fatalf("run %d: coalesced until %s, want %s", run, prevUntil.Raw, docs[len(docs)-1].MD.Until.Raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: coalesced state %v, want %v", run, got, want)
		}
	}
}

func TestCoalesce_NetChanges(t *testing.T) {
	cases := []struct {
		changes []Change
		want    Change // "" for nothing
	}{
		{[]Change{Created, Updated}, Created},
		{[]Change{Created, Deleted}, ""},
		{[]Change{Updated, Deleted}, Deleted},
		{[]Change{Deleted, Created}, Updated},
		{[]Change{Updated, Updated}, Updated},
		{[]Change{Created, Deleted, Created}, Created},
		{[]Change{Deleted, Created, Deleted}, Deleted},
	}
	for _, c := range cases {
		t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		d := &Document{Header: Header{Kind: URLSet, MD: MD{Capability: CapChangeNotification, Length: -1, From: dt(t0), Until: dt(t0.Add(time.Hour))}}}
		for i, ch := range c.changes {
			d.Entries = append(d.Entries, Entry{Loc: "http://example.org/x", MD: &MD{Change: ch, DateTime: dt(t0.Add(time.Duration(i) * time.Minute)), Length: -1}})
		}
		out, err := Coalesce([]*Document{d}, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got Change
		if len(out[0].Entries) == 1 {
			got = out[0].Entries[0].MD.Change
		}
		if got != c.want || len(out) != 1 || len(out[0].Entries) > 1 {
			t.Errorf("%v coalesced to %q (%d entries), want %q", c.changes, got, len(out[0].Entries), c.want)
		}
	}
}

func TestCoalesce_RefusesOverlapAndMissingWindow(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Document{Header: Header{MD: MD{From: dt(t0), Until: dt(t0.Add(time.Hour))}}}
	b := &Document{Header: Header{MD: MD{From: dt(t0), Until: dt(t0.Add(2 * time.Hour))}}}
	if _, err := Coalesce([]*Document{a, b}, 0); err == nil {
		t.Error("overlapping windows coalesced")
	}
	if _, err := Coalesce([]*Document{{}}, 0); err == nil {
		t.Error("a document without from/until coalesced")
	}
	if _, err := Coalesce(nil, 0); err == nil {
		t.Error("nothing coalesced")
	}
}

func TestFilter_ApplyKeepsWindowAndSelects(t *testing.T) {
	f, err := ParseFilter([]string{"http://example.org/a/"}, []string{"created, deleted"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Document{Header: Header{MD: MD{From: dt(t0), Until: dt(t0.Add(time.Hour))}}}
	for _, e := range []struct {
		loc string
		ch  Change
	}{{"http://example.org/a/1", Created}, {"http://example.org/a/2", Updated}, {"http://example.org/b/1", Created}, {"http://example.org/a/3", Deleted}} {
		d.Entries = append(d.Entries, Entry{Loc: e.loc, MD: &MD{Change: e.ch, Length: -1}})
	}
	got := f.Apply(d)
	var locs []string
	for _, e := range got.Entries {
		locs = append(locs, e.Loc)
	}
	if want := []string{"http://example.org/a/1", "http://example.org/a/3"}; !reflect.DeepEqual(locs, want) {
		t.Fatalf("filtered %v, want %v", locs, want)
	}
	if got.MD.From != d.MD.From || got.MD.Until != d.MD.Until || len(d.Entries) != 4 {
		t.Fatal("the window changed or the original was modified")
	}
	if (Filter{}).Apply(d) != d {
		t.Fatal("the zero filter copied the document")
	}
	for _, bad := range []struct {
		p []string
		c []string
	}{{nil, []string{"moved"}}, {make([]string, MaxFilterPrefixes+1), nil}, {[]string{"http://a/" + string(make([]byte, MaxFilterPrefixLen))}, nil}} {
		if _, err := ParseFilter(bad.p, bad.c); err == nil {
			t.Errorf("ParseFilter(%d prefixes, %q) accepted", len(bad.p), bad.c)
		}
	}
}

// CoalesceDeleting keeps a created-then-deleted resource as a deletion, so
// a destination that already holds it (a baseline taken inside the run)
// ends without it, as after the originals.
func TestCoalesceDeleting_CreatedThenDeletedIsADeletion(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Document{Header: Header{Kind: URLSet, MD: MD{Capability: CapChangeNotification, Length: -1, From: dt(t0), Until: dt(t0.Add(time.Hour))}}}
	for i, ch := range []Change{Created, Deleted} {
		d.Entries = append(d.Entries, Entry{Loc: "http://example.org/x", MD: &MD{Change: ch, DateTime: dt(t0.Add(time.Duration(i) * time.Minute)), Length: -1}})
	}
	out, err := CoalesceDeleting([]*Document{d}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out[0].Entries) != 1 || out[0].Entries[0].MD.Change != Deleted {
		t.Fatalf("created then deleted: %+v, want one deletion", out[0].Entries)
	}
	state := map[string]resource{"http://example.org/x": {hash: "md5:00000000000000000000000000000000"}}
	apply(state, out[0])
	if len(state) != 0 {
		t.Fatalf("a destination holding the resource still holds it: %v", state)
	}
	if out, _ := Coalesce([]*Document{d}, 0); len(out[0].Entries) != 0 {
		t.Fatalf("Coalesce kept %d entries for created then deleted, want none", len(out[0].Entries))
	}
}
