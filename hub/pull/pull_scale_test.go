package pull_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// scaleChannels are the channel counts the scale benchmarks compare.
var scaleChannels = []int{1, 10000}

// channelNames returns n channel names.
func channelNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out
}

// scaleEnv is a running Pull (Run and framework notifications on, as the
// server runs it) over n channels, each with notifications enough to have
// closed a list and to have an open one.
type scaleEnv struct {
	*env
	names []string
	at    []time.Time // each channel's next from
}

func newScaleEnv(b *testing.B, n int) *scaleEnv {
	b.Helper()
	names := channelNames(n)
	e := &scaleEnv{env: newEnv(b, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 4}}, names...), names: names, at: make([]time.Time, n)}
	e.pull.EnableFramework(e.intake())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.pull.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	for i := range n {
		e.at[i] = t0
		for range 3 { // 2 entries each: the third closes the first list
			e.next(i)
		}
	}
	if err := e.pull.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	return e
}

// next appends channel i's next contiguous notification.
func (e *scaleEnv) next(i int) {
	until := e.at[i].Add(time.Minute)
	e.notify(e.names[i], e.at[i], until, entries(e.at[i], until, 2, i))
	e.at[i] = until
}

// BenchmarkPull_Channels measures pull mode over 1 and 10,000 channels:
// each op appends a notification to a channel (round-robin over all) and
// GETs that channel's open Change List, which first catches up with the
// log; Run runs meanwhile (renders closed lists ahead, announces
// rotations). The two figures should match. Reported beside ns/op and
// allocations: p50 and p99 latency of the GET.
func BenchmarkPull_Channels(b *testing.B) {
	envs := map[int]*scaleEnv{}
	for _, n := range scaleChannels {
		b.Run(fmt.Sprintf("channels=%d", n), func(sb *testing.B) {
			e := envs[n]
			if e == nil {
				e = newScaleEnv(b, n) // once per size, kept across the b.N rounds
				envs[n] = e
			}
			c := &http.Client{}
			lat := make([]time.Duration, sb.N)
			sb.ReportAllocs()
			sb.ResetTimer()
			for k := range sb.N {
				i := k % n
				e.next(i)
				t0 := time.Now()
				resp, err := c.Get(e.base + wire.ChangeListPath(e.names[i]))
				if err != nil {
					sb.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					sb.Fatalf("GET open list of %s: %d", e.names[i], resp.StatusCode)
				}
				lat[k] = time.Since(t0)
			}
			sb.StopTimer()
			slices.Sort(lat)
			sb.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			sb.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkPull_ChannelHeap measures the heap pull mode keeps per channel
// (its list index, rendered-ahead marks, channel listing) once each of
// 10,000 channels has a closed and an open list: the heap with the Pull,
// minus the heap once it is dropped (the log stays). Run it with
// -benchtime=1x.
func BenchmarkPull_ChannelHeap(b *testing.B) {
	for _, n := range scaleChannels {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			for range b.N {
				e := newEnv(b, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 4}, CacheBytes: -1}, channelNames(n)...)
				at := t0
				for i := range n {
					for range 3 {
						e.notify(fmt.Sprintf("c%d", i), at, at.Add(time.Minute), entries(at, at.Add(time.Minute), 2, i))
						at = at.Add(time.Minute)
					}
				}
				if err := e.pull.Sync(context.Background()); err != nil {
					b.Fatal(err)
				}
				with := heapInUse()
				e.srv.Config.Handler, e.pull = nil, nil
				without := heapInUse()
				b.ReportMetric(float64(with-without)/float64(n), "pull-heap-B/channel")
				b.ReportMetric(float64(with-without)/(1<<20), "pull-heap-MB")
			}
		})
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// Run renders ahead the lists of exactly the channels whose lists closed:
// with many channels, a notification that closes no list renders nothing,
// and one that closes a list renders that list once.
func TestPull_RenderAheadFollowsRotations(t *testing.T) {
	const n = 40
	names := channelNames(n)
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 4}}, names...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = e.pull.Run(ctx) }()
	at := make([]time.Time, n)
	next := func(i int) {
		until := at[i].Add(time.Minute)
		e.notify(names[i], at[i], until, entries(at[i], until, 2, i))
		at[i] = until
	}
	for i := range n {
		at[i] = t0
		for range 3 { // 2 entries each: the third closes the first list
			next(i)
		}
	}
	testenv.Eventually(t, 10*time.Second, func() bool { return e.pull.CacheStats().Lists == n }, "a closed list of each channel rendered ahead")
	before := e.pull.CacheStats()
	next(5) // 4 entries in c5's open list: it stays open
	next(7)
	next(7) // closes c7's second list
	testenv.Eventually(t, 10*time.Second, func() bool { return e.pull.CacheStats().Lists == n+1 }, "c7's second closed list rendered ahead")
	if after := e.pull.CacheStats(); after.Misses != before.Misses+1 {
		t.Fatalf("renderings: before %+v, after %+v; want exactly one more", before, after)
	}
}
