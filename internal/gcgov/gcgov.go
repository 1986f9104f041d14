// Package gcgov paces a process's garbage collection by the size of its
// heap alone. The Go runtime, with its default GOGC=100, collects when the
// heap has grown by its live size since the last collection, and also
// whenever two minutes pass without one. That second collection is what
// makes a big process's idle CPU grow with its size: a hub holding
// 1,000,000 subscriptions marks them all every two minutes, 2.6 s of CPU
// each time, while it does nothing else.
//
// A Governor turns GOGC off, which is the only thing that stops the
// periodic collection, and after every collection sets the runtime's memory
// limit to where GOGC=100 would have put the next one (plus a tenth, see
// limitFor). So a process that allocates is collected about as often as
// before, and one that does not is not collected at all.
package gcgov

import (
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Governor paces the process's collections by its heap (see the package
// documentation) from Start until Stop.
type Governor struct {
	logger *slog.Logger

	mu      sync.Mutex
	stopped bool
	samples []metrics.Sample // read after each collection, under mu
	limit   int64            // the memory limit last set
	updates uint64           // the collections the limit was set after
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
}

// memState is what the runtime reports after a collection, in bytes.
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
	// retainPercent is added to the heap goal so that the runtime's
	// scavenger, which returns free memory to the system until the process
	// maps 95 % of its memory limit, keeps about what it keeps under
	// GOGC=100 (10 % over the heap goal) instead of returning, near every
	// collection, pages the heap takes back right after.
	retainPercent = 10
)

// limitFor returns the memory limit under which the runtime collects next
// when the heap reaches the goal GOGC=100 would set after the collection m
// describes, plus retainPercent: the goal, the memory the runtime maps
// outside the heap, and the headroom it takes off a limit's goal.
func limitFor(m memState) int64 {
	live := m.live
	if live == 0 { // no collection yet: what the heap holds is the most it can be
		live = m.objects
	}
	goal := live + live + m.stacks + m.globals // GOGC=100
	goal = max(goal, heapMinimum)
	goal += goal / 100 * retainPercent
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

// Start governs the process's collections and returns the Governor, or
// returns nil and leaves the runtime as it is when the operator chose its
// pacing (GOGC or GOMEMLIMIT in env, which is os.LookupEnv or a test's), or
// when something else already turned GOGC off or set a memory limit: in a
// process running two hubs, the second finds the first's Governor so.
func Start(env func(string) (string, bool), logger *slog.Logger) *Governor {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := env(name); ok {
			logger.Info("gc: the Go runtime paces collections, as "+name+" is set", "value", v)
			return nil
		}
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		logger.Info("gc: a memory limit is already set; the Go runtime paces collections")
		return nil
	}
	g := &Governor{logger: logger, samples: make([]metrics.Sample, len(sampleNames))}
	for i, name := range sampleNames {
		g.samples[i].Name = name
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.setLimitLocked() // the limit first: GOGC off without one would let the heap grow
	if prev := debug.SetGCPercent(-1); prev < 0 {
		debug.SetMemoryLimit(math.MaxInt64)
		logger.Info("gc: GOGC is already off; the Go runtime paces collections")
		return nil
	}
	runtime.SetFinalizer(&cycleMark{g: g}, onCycle)
	logger.Debug("gc: collections paced by the heap, without the periodic one", "limit", g.limit)
	return g
}

// Stop gives the pacing back to the runtime: GOGC=100 and no memory limit.
// A nil Governor's Stop does nothing.
func (g *Governor) Stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.stopped = true
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
}

// Limit returns the memory limit last set and the number of collections
// it was set after (the first is set by Start).
func (g *Governor) Limit() (limit int64, updates uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit, g.updates
}

// cycleMark is an object the governor drops at once, so that the
// collector finds it unreachable at each cycle and queues its finalizer,
// which sets the new limit and takes it back for the next cycle. Its
// pointer keeps it off the tiny allocator, whose blocks are finalized
// together.
type cycleMark struct{ g *Governor }

// onCycle runs on the runtime's finalizer goroutine after each collection.
func onCycle(m *cycleMark) {
	m.g.mu.Lock()
	defer m.g.mu.Unlock()
	if m.g.stopped {
		return
	}
	m.g.setLimitLocked()
	m.g.updates++
	runtime.SetFinalizer(m, onCycle)
}

// setLimitLocked reads the runtime's state and sets its memory limit; g.mu
// is held.
func (g *Governor) setLimitLocked() {
	metrics.Read(g.samples)
	v := func(i int) uint64 {
		if g.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return g.samples[i].Value.Uint64()
	}
	g.limit = limitFor(memState{live: v(0), stacks: v(1), globals: v(2), total: v(3), released: v(4), free: v(5), objects: v(6)})
	debug.SetMemoryLimit(g.limit)
}
