package rldiff

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// sitemap streams one Resource List of the URLs [from, to) of a Source
// state: version v changes every 100th URL's lastmod, drops every 200th and
// adds as many new ones.
func sitemap(from, to, v int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>`)
		entry := func(loc string, day int) {
			fmt.Fprintf(w, "<url><loc>%s</loc><lastmod>2025-01-%02dT00:00:00Z</lastmod><rs:md length=\"%d\"/></url>\n", loc, day, 1000+day)
		}
		for i := from; i < to; i++ {
			day := 1
			switch {
			case v > 0 && i%200 == 0:
				entry(fmt.Sprintf("http://source.example/new/%d", i), 2) // i's replacement
				continue
			case v > 0 && i%100 == 0:
				day = 2
			}
			entry(fmt.Sprintf("http://source.example/resource/%07d", i), day)
		}
		fmt.Fprint(w, "</urlset>")
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// peakHeap samples the live heap until stop is called and returns the
// largest sample.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// snapshotSitemaps sorts the n sitemaps of a Source state into a snapshot.
func snapshotSitemaps(tb testing.TB, dir, name string, urls, sitemaps, v int) string {
	s := NewSorter(dir, 0)
	per := urls / sitemaps
	for k := range sitemaps {
		d := changefeed.NewDecoder(sitemap(k*per, (k+1)*per, v), changefeed.Options{})
		for {
			e, err := d.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
			if err := s.Add(FromEntry(e)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	path := filepath.Join(dir, name)
	if _, err := s.Finish(path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkDiff_ResourceListIndex1M follows a Resource List Index of 20
// sitemaps of 50,000 URLs (1,000,000 in all) from one state to the next
// (1 % updated, 0.5 % deleted, 0.5 % created): parse every sitemap
// streamed, sort into a snapshot, diff with the last one. It reports the
// seconds per followed state and the peak live heap.
func BenchmarkDiff_ResourceListIndex1M(b *testing.B) {
	const urls, sitemaps = 1_000_000, 20
	dir := b.TempDir()
	old := snapshotSitemaps(b, dir, "old", urls, sitemaps, 0)
	runtime.GC()
	b.ResetTimer()
	var peak uint64
	for range b.N {
		stop := peakHeap()
		cur := snapshotSitemaps(b, dir, "new", urls, sitemaps, 1)
		var changed int
		c, err := Diff(old, cur, func(Change) error { changed++; return nil })
		peak = max(peak, stop())
		if err != nil {
			b.Fatal(err)
		}
		if want := urls/100 - urls/200 + 2*(urls/200); changed != want || c.Created != urls/200 || c.Deleted != urls/200 {
			b.Fatalf("%d changes (%+v), want %d", changed, c, want)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "MB-peak-heap")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/state")
}
