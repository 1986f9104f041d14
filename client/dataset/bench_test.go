package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchPatches returns patches that together add total distinct quads
// (IRIs, literals with languages and datatypes, blank nodes, named
// graphs), per quads each, then retract and re-add one in ten of the
// previous patch's quads, as an edited dataset's history does.
func benchPatches(total, per int) []string {
	var out []string
	quad := func(i int) string {
		switch i % 4 {
		case 0:
			return fmt.Sprintf("<http://example.org/entity/%d> <http://schema.org/name> \"Name %d\"@en .", i/4, i)
		case 1:
			return fmt.Sprintf("<http://example.org/entity/%d> <http://schema.org/numberOfPages> \"%d\"^^<http://www.w3.org/2001/XMLSchema#integer> <http://example.org/graph/g%d> .", i/4, i, i%7)
		case 2:
			return fmt.Sprintf("_:b%d <http://schema.org/address> <http://example.org/place/%d> .", i/4, i)
		default:
			return fmt.Sprintf("<http://example.org/entity/%d> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Class%d> .", i/4, i%50)
		}
	}
	for start := 0; start < total; start += per {
		var b strings.Builder
		b.WriteString("--- a\n+++ b\n@@ -0,0 +1 @@\n")
		for i := start; i < min(start+per, total); i++ {
			b.WriteString("+" + quad(i) + "\n")
		}
		if start > 0 {
			for i := start - per; i < start; i += 10 {
				b.WriteString("-" + quad(i) + "\n+" + quad(i) + "\n")
			}
		}
		out = append(out, b.String())
	}
	return out
}

// BenchmarkApply_MillionQuadsFromPatches builds a 1,000,000-quad dataset
// from 100 patches of 10,000 additions (plus 1,000 retractions and
// re-additions each) and reports the apply throughput in quads (changes)
// per second and the live heap per quad of the finished store.
//
//	go test -run '^$' -bench Apply_MillionQuads -benchmem -benchtime 3x ./client/dataset/
func BenchmarkApply_MillionQuadsFromPatches(b *testing.B) {
	patches := benchPatches(1_000_000, 10_000)
	changes := 0
	for _, p := range patches {
		changes += strings.Count(p, "\n+<") + strings.Count(p, "\n+_") + strings.Count(p, "\n-")
	}
	var s *Store
	var heap uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s = nil
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		s = &Store{}
		b.StartTimer()
		for _, p := range patches {
			if _, err := s.ApplyPatch(strings.NewReader(p)); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		b.StartTimer()
	}
	b.StopTimer()
	if s.Len() != 1_000_000 {
		b.Fatalf("%d quads", s.Len())
	}
	b.ReportMetric(float64(changes)*float64(b.N)/b.Elapsed().Seconds(), "quads/s")
	b.ReportMetric(float64(heap)/float64(s.Len()), "heap-B/quad")
	runtime.KeepAlive(s)
}

// BenchmarkImporter_MillionQuadsJournaled is the same through an
// Importer: each patch read from its file, written to the journal and
// synced, applied; a snapshot (sorted N-Quads) at the end.
//
//	go test -run '^$' -bench Importer_MillionQuads -benchmem -benchtime 1x ./client/dataset/
func BenchmarkImporter_MillionQuadsJournaled(b *testing.B) {
	patches := benchPatches(1_000_000, 10_000)
	changes := 0
	for _, p := range patches {
		changes += strings.Count(p, "\n+<") + strings.Count(p, "\n+_") + strings.Count(p, "\n-")
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		im, err := Open(Config{Dir: dir, Dataset: Dataset{CapabilityList: "http://x/cl.xml"}, SnapshotEvery: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		for i, p := range patches { // as if fetched
			name := fmt.Sprintf("x/%04d.nqud", i)
			_ = os.MkdirAll(filepath.Join(dir, PatchDir, "x"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, PatchDir, name), []byte(p), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		im.mu.Lock()
		for i := range patches {
			if err := im.applyPatchFile(fmt.Sprintf("x/%04d.nqud", i), "http://x/p"); err != nil {
				b.Fatal(err)
			}
		}
		err = im.snapshot()
		im.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if im.Len() != 1_000_000 {
			b.Fatalf("%d quads", im.Len())
		}
		im.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(changes)*float64(b.N)/b.Elapsed().Seconds(), "quads/s")
}
