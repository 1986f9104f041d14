package follow

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngine_1000UnchangedSources follows 1,000 Sources (each its own
// URLs, on one loopback server) whose open Change List does not change:
// every poll is a claim, the channel's anchor and a conditional GET
// answered 304. heap-KB/source is the live heap the followers add (after
// their discovery and first read) beside the same engine following none;
// cpu-µs/poll is the process CPU per poll (the loopback Source's share
// included), so 1,000 Sources at a 60 s interval cost 1000/60 of it each
// second.
func BenchmarkEngine_1000UnchangedSources(b *testing.B) {
	const n = 1000
	r := newRig(b)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1, "b@"+t2))
	st := &listStore{}
	e, err := New(Config{Hub: r.hub, Store: st, Client: r.srv.Client(), Reconcile: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(b, 5*time.Second, e.running, "the engine runs")
	idle := liveHeap()
	st.mu.Lock()
	for i := range n {
		// each Source its own documents: the query tells them apart
		st.chs = append(st.chs, hub.Channel{Name: fmt.Sprintf("s%d", i), Follow: fmt.Sprintf("%s/cap.xml?s=%d", r.srv.URL, i),
			PollInterval: "60s", Validation: hub.ValidationStrict})
	}
	st.mu.Unlock()
	polls := func() (sum uint64) {
		e.mu.Lock() // the followers' own counts: the stored ones lag by up to statusEvery
		defer e.mu.Unlock()
		for _, r := range e.followers {
			sum += r.f.status().Polls
		}
		return sum
	}
	e.PollNow("s0") // reads the channels
	testenv.Eventually(b, time.Minute, func() bool { return polls() >= n }, "every Source read once")
	heap := liveHeap() - idle
	b.ResetTimer()
	cpu0, at := cpuTime(), polls()
	for range b.N {
		for i := range n {
			e.PollNow(fmt.Sprintf("s%d", i))
		}
		at += n
		testenv.Eventually(b, time.Minute, func() bool { return polls() >= at }, "every Source polled")
	}
	b.StopTimer()
	b.ReportMetric(float64(heap)/n/1e3, "heap-KB/source")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*n), "cpu-µs/poll")
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
