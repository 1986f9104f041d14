package delivery

import (
	"context"
	"sync/atomic"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// The cap on the queues' reads of the log in flight over the engine.
//
// A queue behind the log reads it record by record (Next) or by runs
// (Range, for coalesced catch-up). After a restart every queue of a large
// hub may be behind at once: without a cap each starts its read at the
// same time, and on JetStream every one is a request on the one NATS
// connection, with its reply subscription and buffers, queued behind the
// others until replies are dropped as a slow consumer, reads fail and are
// retried, and memory grows with the queues. Under the cap a mass catch-up
// goes at the log's pace: a queue waits for a slot before it asks, holding
// nothing of the read while it waits, and gives up waiting when its
// context ends. Reads the log cache answers from memory (logcache.Cache
// Holds them) take no slot.
//
// The wake-up dispatcher's reads (webhook_wake.go) and the dead letters of
// a coalesced run (coalesce_queue.go), whose reads wait on store writes,
// are not counted.

// logReadsPerCore is the log reads in flight per core (GOMAXPROCS).
const logReadsPerCore = 8

// minLogReads is the least cap whatever the cores: enough to keep a log
// on the network busy.
const minLogReads = 16

// memoryLog is a log that answers some reads from memory (logcache.Cache).
type memoryLog interface {
	Holds(channel string, seq uint64) bool
}

// readGate is the engine's log as its queues read it: Next, Range and
// RangeHeaders take a slot of the cap, other calls go straight to the log.
type readGate struct {
	hub.Log
	mem   memoryLog // nil when the log has no memory
	slots chan struct{}

	inFlight atomic.Int64
	peak     atomic.Int64 // most reads in flight at once, for tests
	waited   atomic.Uint64
}

var _ hub.Log = (*readGate)(nil)

// newReadGate returns log with at most n reads in flight; n <= 0 is
// defaultLogReads.
func newReadGate(log hub.Log, n int) *readGate {
	if n <= 0 {
		n = defaultLogReads()
	}
	g := &readGate{Log: log, slots: make(chan struct{}, n)}
	g.mem, _ = log.(memoryLog)
	return g
}

// defaultLogReads is the cap for the cores the hub runs on.
func defaultLogReads() int { return max(logReadsPerCore*procs(), minLogReads) }

// enter waits for a slot for a read of channel from seq, unless the log
// answers it from memory; it reports whether a slot was taken, for leave.
func (g *readGate) enter(ctx context.Context, channel string, seq uint64) (bool, error) {
	if g.mem != nil && g.mem.Holds(channel, seq) {
		return false, nil
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.waited.Add(1)
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	n := g.inFlight.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	return true, nil
}

// leave gives back the slot enter took, if any.
func (g *readGate) leave(took bool) {
	if took {
		g.inFlight.Add(-1)
		<-g.slots
	}
}

// Next is the log's Next under the cap.
func (g *readGate) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	took, err := g.enter(ctx, channel, seq)
	if err != nil {
		return wire.Record{}, err
	}
	defer g.leave(took)
	return g.Log.Next(ctx, channel, seq)
}

// Range reads channel's records in [from, to] as logcache.ReadRange does,
// under one slot of the cap.
func (g *readGate) Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return g.rangeRead(ctx, channel, from, to, false, fn)
}

// RangeHeaders is Range allowing records without their bodies.
func (g *readGate) RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return g.rangeRead(ctx, channel, from, to, true, fn)
}

func (g *readGate) rangeRead(ctx context.Context, channel string, from, to uint64, headersOnly bool, fn func(wire.Record) error) error {
	took, err := g.enter(ctx, channel, from)
	if err != nil {
		return err
	}
	defer g.leave(took)
	return logcache.ReadRange(ctx, g.Log, channel, from, to, headersOnly, fn)
}
