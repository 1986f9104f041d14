package pull_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

// nextOnly hides jslog's Range so Pull reads one Next per record.
type nextOnly struct{ hub.Log }

// fullList appends notifications (perNote entries each) until a closed list
// holds total entries, plus one notification that closes it, and returns
// the closed list's URL.
func fullList(b *testing.B, e *env, total, perNote int) string {
	b.Helper()
	at := t0
	var first uint64
	for i := 0; i < total/perNote; i++ {
		until := at.Add(time.Minute)
		seq := e.notify("a", at, until, entries(at, until, perNote, i))
		if first == 0 {
			first = seq
		}
		at = until
	}
	e.notify("a", at, at.Add(time.Minute), entries(at, at.Add(time.Minute), perNote, -1))
	return e.base + wire.ChangeListFilePath("a", first)
}

// heapPeak samples HeapInuse until stop is called and returns the peak
// above the level when it started.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
					peak.Store(ms.HeapInuse - base)
				}
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

func fetchAll(b *testing.B, c *http.Client, url, enc string) int64 {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", enc)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %v %s", url, err, resp.Status)
	}
	return n
}

// BenchmarkGetClosedList measures GET of a full closed Change List (5,000
// and 50,000 entries) from the rendered-list cache and streamed from the
// log (cache off, with jslog's Range or one Next per record), identity and
// gzip. It reports the peak heap in use above the idle level while serving.
func BenchmarkGetClosedList(b *testing.B) {
	for _, mode := range []string{"cached", "stream-range", "stream-next", "stream-memlog"} {
		for _, size := range []int{5000, 50000} {
			for _, shape := range []int{1000, 10} {
				if mode == "stream-next" && shape != 10 || size == 50000 && shape == 10 && mode != "stream-range" || mode == "stream-memlog" && shape != 1000 {
					continue
				}
				for _, enc := range []string{"identity", "gzip"} {
					name := fmt.Sprintf("%s/entries=%d/per-notification=%d/%s", mode, size, shape, enc)
					b.Run(name, func(b *testing.B) {
						cfg := pull.Config{Rotation: changefeed.Rotation{MaxEntries: size}}
						if mode != "cached" {
							cfg.CacheBytes = -1
						}
						e := newEnv(b, cfg, "a")
						if mode == "stream-next" {
							e.wrap(b, cfg, nextOnly{e.log})
						}
						url := fullList(b, e, size, shape)
						if mode == "stream-memlog" {
							e.wrap(b, cfg, copyLog(b, e.log))
						}
						c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
						n := fetchAll(b, c, url, enc) // warms the cache
						b.SetBytes(n)
						b.ResetTimer()
						for b.Loop() {
							fetchAll(b, c, url, enc)
						}
						b.StopTimer()
						// heap: a separate pass with GOGC=5 so HeapInuse
						// follows live memory rather than GC slack
						old := debug.SetGCPercent(5)
						stop := heapPeak()
						for range 3 {
							fetchAll(b, c, url, enc)
						}
						b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MB")
						debug.SetGCPercent(old)
					})
				}
			}
		}
	}
}

// BenchmarkConditionalGet measures If-None-Match requests answered 304 for
// a closed list and for the open list (which first catches up with the log).
func BenchmarkConditionalGet(b *testing.B) {
	e := newEnv(b, pull.Config{}, "a")
	closed := fullList(b, e, 5000, 1000)
	for _, tc := range []struct{ name, url string }{{"closed", closed}, {"open", e.base + "/channels/a/changelist.xml"}} {
		b.Run(tc.name, func(b *testing.B) {
			c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
			resp, err := c.Get(tc.url)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			etag := resp.Header.Get("ETag")
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", tc.url, nil)
					req.Header.Set("If-None-Match", etag)
					resp, err := c.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusNotModified {
						b.Errorf("status %s", resp.Status)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// memLog is a hub.Log held in memory, to measure Pull's own heap apart from
// the embedded NATS server's.
type memLog struct{ recs []wire.Record }

func copyLog(b *testing.B, l *jslog.Log) *memLog {
	m := &memLog{}
	if err := l.Range(context.Background(), "", 1, math.MaxUint64, func(r wire.Record) error {
		m.recs = append(m.recs, r)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return m
}

func (m *memLog) Append(context.Context, wire.Record) (uint64, bool, error) {
	return 0, false, errors.New("read-only")
}

func (m *memLog) Next(_ context.Context, channel string, seq uint64) (wire.Record, error) {
	i := sort.Search(len(m.recs), func(i int) bool { return m.recs[i].Seq >= seq })
	for ; i < len(m.recs); i++ {
		if channel == "" || m.recs[i].Channel == channel {
			return m.recs[i], nil
		}
	}
	return wire.Record{}, hub.ErrNotFound
}

func (m *memLog) Bounds(context.Context) (uint64, uint64, error) {
	return m.recs[0].Seq, m.recs[len(m.recs)-1].Seq, nil
}

func (m *memLog) Changed() <-chan struct{} { return nil }

// wrap replaces the env's Pull with one reading log.
func (e *env) wrap(b *testing.B, cfg pull.Config, log hub.Log) {
	b.Helper()
	cfg.HubURL, cfg.BaseURL = hubURL, e.base
	p, err := pull.New(log, channels{{Name: "a", Topic: "http://example.com/a/change/", Created: t0}}, cfg)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	e.srv.Config.Handler = mux
	e.pull = p
}
