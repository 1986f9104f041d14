package gcgov

import (
	"runtime/debug"
	"time"
)

// Giving a quiet process's free heap back. With GOGC=100 a heap that grew
// to twice its live size while the process worked (a hub verifying tens
// of thousands of subscriptions) stays mapped once the work ends: the
// runtime keeps, and its scavenger only slowly returns, what it may need
// up to the next collection's goal, about as much again as the live heap.
// Once the process has been quiet for releaseTick (it allocated less than
// a sixteenth of its live heap meanwhile) and holds at least
// minRetained, and a quarter of its live heap, beyond what is live, the
// governor collects and returns the free memory to the operating system
// (debug.FreeOSMemory). It does so at most once per cycle's worth of
// allocation (as many bytes as were live at the last release), so it
// costs at most one full collection per collection the runtime would have
// made anyway; a small heap is left alone.

// releaseTick is how often the governor looks whether the process went
// quiet, and how long it must have been.
const releaseTick = 5 * time.Second

// minRetained is the least free heap worth a collection to give back.
const minRetained = 64 << 20

// releaseDue reports whether a process in state m, having allocated
// sinceTick bytes over the last releaseTick and sinceRelease since the
// last release, when liveThen bytes were live, should give its free heap
// back now.
func releaseDue(m memState, sinceTick, sinceRelease, liveThen uint64) bool {
	live := m.live
	if live == 0 || m.free+m.objects < live {
		return false
	}
	retained := m.free + m.objects - live
	return sinceTick < live/16 && retained >= max(minRetained, live/4) && sinceRelease >= liveThen
}

// releaser is the state of the quiet release between looks.
type releaser struct {
	allocs, allocsAtRelease, liveAtRelease uint64
	releases                               uint64
}

// releaseLocked reads the runtime's state through g's samples and releases the
// free heap when releaseDue says so; g.mu is held.
func (g *Governor) releaseLocked() {
	m, allocs := g.readLocked()
	r := &g.rel
	sinceTick := allocs - r.allocs
	r.allocs = allocs
	if !releaseDue(m, sinceTick, allocs-r.allocsAtRelease, r.liveAtRelease) {
		return
	}
	start := time.Now()
	debug.FreeOSMemory()
	r.allocsAtRelease, r.liveAtRelease = allocs, m.live
	r.releases++
	g.stats.Releases++
	g.logger.Debug("gc: quiet; free heap given back", "live", m.live, "retained", m.free+m.objects-m.live, "took", time.Since(start))
}
