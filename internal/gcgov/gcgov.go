// Package gcgov stops the Go runtime's periodic collection of an idle
// process. The runtime, with its default GOGC=100, collects when the heap
// has grown by its live size since the last collection, and also whenever
// two minutes pass without one. That second collection is what makes a big
// process's idle CPU grow with its size: a hub holding 1,000,000
// subscriptions marks them all every two minutes, about 3 s of CPU each
// time, while it does nothing else.
//
// A Governor leaves the runtime's pacing alone while the process allocates
// enough to collect at least once a minute. Once a minute has passed
// without a collection, it turns GOGC off, which is the only thing that
// stops the periodic one, and sets the runtime's memory limit to where
// GOGC=100 puts the next collection (limitFor). The first collection after
// that, which only allocation can now bring, gives the pacing back to
// GOGC=100. So a process that allocates is paced exactly as before, and
// one that does not is not collected at all.
//
// It also gives a quiet process's free heap back to the operating system
// once a big heap's work has ended (release.go).
package gcgov

import (
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Idle is how long a process goes by default without a collection before
// the governor takes the pacing over; MaxIdle the longest that still comes
// before the runtime's 2 minutes, counting the governor's delay (a quarter
// of it).
const (
	Idle    = time.Minute
	MaxIdle = 90 * time.Second
)

// Governor stops the periodic collection of the process while it is idle
// (see the package documentation), from Start until Stop.
type Governor struct {
	logger     *slog.Logger
	idle, tick time.Duration
	quit, done chan struct{}

	mu        sync.Mutex
	stopped   bool
	engaged   bool // GOGC off and a memory limit set, until the next collection
	lastCycle time.Time
	samples   []metrics.Sample // read when engaging, under mu
	stats     Stats
	rel       releaser // release.go
}

// Stats is what a Governor has done.
type Stats struct {
	Engaged     bool   // GOGC is off and Limit set, until the next collection
	Limit       int64  // the memory limit set when it last engaged
	Engagements uint64 // times it took the pacing over
	Cycles      uint64 // collections it saw
	Releases    uint64 // times it gave a quiet process's free heap back (release.go)
}

// The runtime/metrics samples limitFor reads, in the order of
// Governor.samples.
var sampleNames = [...]string{
	"/gc/heap/live:bytes",
	"/gc/scan/stack:bytes",
	"/gc/scan/globals:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/objects:bytes",
	"/gc/heap/allocs:bytes",
}

// memState is what the runtime reports, in bytes.
type memState struct {
	live, stacks, globals uint64 // marked heap, scannable stacks and globals
	total, released       uint64 // memory mapped by the runtime, and released of it
	free, objects         uint64 // heap memory free but not released, and in objects
}

const (
	// heapMinimum is the smallest heap goal, the runtime's own for
	// GOGC=100.
	heapMinimum = 4 << 20
	// headroomPercent and minHeadroom are what the runtime takes off a
	// memory limit's heap goal for pacing errors (its
	// memoryLimitHeapGoalHeadroomPercent and memoryLimitMinHeapGoalHeadroom).
	headroomPercent = 3
	minHeadroom     = 1 << 20
)

// limitFor returns the memory limit under which the runtime collects next
// when the heap reaches the goal GOGC=100 sets after the collection m
// describes: the goal, the memory the runtime maps outside the heap, and
// the headroom the runtime takes off a limit's goal.
func limitFor(m memState) int64 {
	live := m.live
	if live == 0 { // no collection yet: what the heap holds is the most it can be
		live = m.objects
	}
	goal := live + live + m.stacks + m.globals // GOGC=100
	goal = max(goal, heapMinimum)
	var nonHeap uint64
	if used := m.free + m.objects + m.released; m.total > used {
		nonHeap = m.total - used
	}
	headroom := max(goal/(100-headroomPercent)*headroomPercent, minHeadroom)
	limit := nonHeap + goal + headroom
	if limit > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(limit)
}

// Start governs the process's idle collections and returns the Governor,
// or returns nil and leaves the runtime as it is when the operator chose
// its pacing (GOGC or GOMEMLIMIT in env, which is os.LookupEnv or a
// test's), or when GOGC or the memory limit is not the runtime's default
// (set by the program, or by another Governor engaged). Two Governors in
// one process (two hubs) do the same thing twice, harmlessly.
// It takes over once the process has gone idle (Idle when not positive,
// at most MaxIdle) without a collection, looking every quarter of that.
func Start(env func(string) (string, bool), logger *slog.Logger, idle time.Duration) *Governor {
	if idle <= 0 {
		idle = Idle
	}
	idle = min(idle, MaxIdle)
	return start(env, logger, idle, idle/4)
}

// OperatorChose reports whether the environment env (os.LookupEnv or a
// test's) sets the runtime's pacing, GOGC or GOMEMLIMIT, and which with
// what value: a Governor then leaves the runtime alone.
func OperatorChose(env func(string) (string, bool)) (name, value string, ok bool) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := env(name); ok {
			return name, v, true
		}
	}
	return "", "", false
}

func start(env func(string) (string, bool), logger *slog.Logger, idle, every time.Duration) *Governor {
	if name, v, ok := OperatorChose(env); ok {
		logger.Info("gc: the Go runtime paces collections, as "+name+" is set", "value", v)
		return nil
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		logger.Info("gc: a memory limit is already set; the Go runtime paces collections")
		return nil
	}
	if p := debug.SetGCPercent(100); p != 100 {
		debug.SetGCPercent(p)
		logger.Info("gc: GOGC is already set; the Go runtime paces collections", "gogc", p)
		return nil
	}
	g := &Governor{logger: logger, idle: idle, tick: every, quit: make(chan struct{}), done: make(chan struct{}),
		lastCycle: time.Now(), samples: make([]metrics.Sample, len(sampleNames))}
	for i, name := range sampleNames {
		g.samples[i].Name = name
	}
	runtime.SetFinalizer(&cycleMark{g: g}, onCycle)
	go g.watch()
	return g
}

// Stop gives the pacing back to the runtime for good: GOGC=100 and no
// memory limit. A nil Governor's Stop does nothing.
func (g *Governor) Stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return
	}
	g.stopped = true
	g.disengageLocked()
	g.mu.Unlock()
	close(g.quit)
	<-g.done
}

// Stats returns what g has done so far.
func (g *Governor) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// watch engages g once the process has gone g.idle without a collection.
func (g *Governor) watch() {
	defer close(g.done)
	t := time.NewTicker(g.tick)
	defer t.Stop()
	rt := time.NewTicker(releaseTick)
	defer rt.Stop()
	for {
		select {
		case <-g.quit:
			return
		case <-rt.C:
			g.mu.Lock()
			if !g.stopped {
				g.releaseLocked()
			}
			g.mu.Unlock()
		case now := <-t.C:
			g.mu.Lock()
			if !g.stopped && !g.engaged && now.Sub(g.lastCycle) >= g.idle {
				g.engageLocked()
			}
			g.mu.Unlock()
		}
	}
}

// engageLocked sets the memory limit where GOGC=100 collects next, then
// turns GOGC off; g.mu is held.
func (g *Governor) engageLocked() {
	m, _ := g.readLocked()
	limit := limitFor(m)
	debug.SetMemoryLimit(limit) // the limit first: GOGC off without one lets the heap grow
	debug.SetGCPercent(-1)
	g.engaged = true
	g.stats.Engaged, g.stats.Limit = true, limit
	g.stats.Engagements++
	g.logger.Debug("gc: idle; no periodic collection until the heap grows", "limit", limit)
}

// readLocked reads the runtime's memory state and the bytes allocated
// so far; g.mu is held.
func (g *Governor) readLocked() (memState, uint64) {
	metrics.Read(g.samples)
	v := func(i int) uint64 {
		if g.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return g.samples[i].Value.Uint64()
	}
	return memState{live: v(0), stacks: v(1), globals: v(2), total: v(3), released: v(4), free: v(5), objects: v(6)}, v(7)
}

// disengageLocked gives the pacing back to GOGC=100; g.mu is held.
func (g *Governor) disengageLocked() {
	if !g.engaged {
		return
	}
	debug.SetGCPercent(100) // GOGC first: no moment without either
	debug.SetMemoryLimit(math.MaxInt64)
	g.engaged, g.stats.Engaged = false, false
}

// cycleMark is an object the governor drops at once, so that the
// collector finds it unreachable at each cycle and queues its finalizer,
// which notes the collection and takes the mark back for the next one. Its
// pointer keeps it off the tiny allocator, whose blocks are finalized
// together.
type cycleMark struct{ g *Governor }

// onCycle runs on the runtime's finalizer goroutine after each collection:
// the process allocates, so the runtime paces it again.
func onCycle(m *cycleMark) {
	g := m.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.lastCycle = time.Now()
	g.stats.Cycles++
	g.disengageLocked()
	runtime.SetFinalizer(m, onCycle)
}
