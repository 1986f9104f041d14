package follow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

func rlEntry(loc, lastmod, hash string) *changefeed.Entry {
	e := &changefeed.Entry{Loc: loc, MD: &changefeed.MD{Hash: hash, Length: -1}}
	if lastmod != "" {
		e.LastMod = changefeed.DateTime{Time: mustTime(lastmod), Raw: lastmod}
	}
	return e
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func snapshotOf(prev *Snapshot, at string, entries ...*changefeed.Entry) (*Snapshot, []string) {
	b := NewSnapshotBuilder(prev, "http://s.example/")
	for _, e := range entries {
		b.Add(e)
	}
	next, diffs := b.Build(mustTime(at))
	var got []string
	for _, d := range diffs {
		got = append(got, string(d.Change)+" "+d.Loc(prev, next))
	}
	return next, got
}

func TestSnapshotBuilder_DiffsSuccessiveResourceLists(t *testing.T) {
	base, got := snapshotOf(nil, t1,
		rlEntry("http://s.example/a", t0, ""), rlEntry("http://s.example/b", t0, "md5:1"),
		rlEntry("http://other.example/c", t0, ""), rlEntry("http://s.example/b", t0, "md5:1"))
	if len(got) != 0 || base.Len() != 3 {
		t.Fatalf("baseline: changes %v, %d resources; want none, 3 (b listed twice)", got, base.Len())
	}
	tests := []struct {
		name    string
		entries []*changefeed.Entry
		want    []string
	}{
		{"unchanged", []*changefeed.Entry{rlEntry("http://other.example/c", t0, ""), rlEntry("http://s.example/b", t0, "md5:1"), rlEntry("http://s.example/a", t0, "")}, nil},
		{"lastmod, hash, created, deleted (last)", []*changefeed.Entry{rlEntry("http://s.example/a", t1, ""), rlEntry("http://s.example/b", t0, "md5:2"), rlEntry("http://s.example/d", t1, "")},
			[]string{"updated http://s.example/a", "updated http://s.example/b", "created http://s.example/d", "deleted http://other.example/c"}},
		{"everything gone", nil, []string{"deleted http://other.example/c", "deleted http://s.example/a", "deleted http://s.example/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := snapshotOf(base, t2, tt.entries...)
			if tt.entries == nil {
				slices.Sort(got)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes %v, want %v", got, tt.want)
			}
		})
	}
}

// sitemaps renders a Resource List of n resources in sitemaps of per, the
// resources whose number is a multiple of every changed (from the first
// one, when every > 0) with a later lastmod.
func sitemaps(n, per, every int) [][]byte {
	var out [][]byte
	for s := 0; s < n; s += per {
		var b bytes.Buffer
		b.WriteString(rsHead + `<rs:md capability="resourcelist" at="2024-01-02T00:00:00Z"/>`)
		for i := s; i < min(s+per, n); i++ {
			mod := t0
			if every > 0 && i%every == 0 {
				mod = t1
			}
			fmt.Fprintf(&b, `<url><loc>http://s.example/resources/%d</loc><lastmod>%s</lastmod><rs:md hash="md5:d41d8cd98f00b204e9800998ecf8427e" length="%d"/></url>`, i, mod, i%997)
		}
		b.WriteString(`</urlset>`)
		out = append(out, b.Bytes())
	}
	return out
}

func streamInto(tb testing.TB, b *SnapshotBuilder, maps [][]byte) {
	for _, m := range maps {
		dec := changefeed.NewDecoder(bytes.NewReader(m), changefeed.Options{Mode: changefeed.Strict, MaxBytes: 64 << 20})
		if _, err := dec.Header(); err != nil {
			tb.Fatal(err)
		}
		for {
			e, err := dec.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
			b.Add(e)
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkSnapshot_Diff1MResources streams a Resource List of 1,000,000
// resources (20 sitemaps of 50,000) into a Snapshot diffed with the
// previous one (1% updated). heap-MB is what the follower holds once the
// diff is done (both Snapshots and the changes), beside the benchmark's
// own documents.
func BenchmarkSnapshot_Diff1MResources(b *testing.B) {
	const n, per = 1_000_000, 50_000
	prevMaps, nextMaps := sitemaps(n, per, 0), sitemaps(n, per, 100)
	before := liveHeap()
	pb := NewSnapshotBuilder(nil, "http://s.example/")
	streamInto(b, pb, prevMaps)
	prev, _ := pb.Build(mustTime(t1))
	var heap int64
	b.ResetTimer()
	for range b.N {
		nb := NewSnapshotBuilder(prev, "http://s.example/")
		streamInto(b, nb, nextMaps)
		next, diffs := nb.Build(mustTime(t2))
		if len(diffs) != n/100 || next.Len() != n {
			b.Fatalf("%d changes of %d resources", len(diffs), next.Len())
		}
		b.StopTimer()
		heap = max(heap, liveHeap()-before)
		runtime.KeepAlive(next)
		runtime.KeepAlive(diffs)
		b.StartTimer()
	}
	b.StopTimer()
	runtime.KeepAlive(prev)
	runtime.KeepAlive(prevMaps)
	b.ReportMetric(float64(heap)/1e6, "heap-MB")
}
