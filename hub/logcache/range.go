package logcache

import (
	"context"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// rangeReader is a log that reads a run of records in one pass, as
// jslog.Log does with a batched consumer.
type rangeReader interface {
	Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error
}

// headerRangeReader reads a run of records' metadata without their bodies.
type headerRangeReader interface {
	RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error
}

// RangeHeaders is Range for callers that need only records' metadata: the
// underlying log's headers-only read when it has one and the run starts
// before the ring (records may then come without Body); Range otherwise.
func (c *Cache) RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	if hl, ok := c.log.(headerRangeReader); ok && !c.Holds(channel, from) {
		return hl.RangeHeaders(ctx, channel, from, to, fn)
	}
	return c.Range(ctx, channel, from, to, fn)
}

// Range calls fn, in sequence order, for each record of channel (every
// channel when channel is "") whose sequence lies in [from, to], until fn
// returns an error, which Range returns. Long runs are read by the
// underlying log's own range read when it has one and the run starts
// before the ring; otherwise record by record through the cache.
func (c *Cache) Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	// a run the ring holds from its start is read from memory
	if rl, ok := c.log.(rangeReader); ok && !c.Holds(channel, from) {
		return rl.Range(ctx, channel, from, to, fn)
	}
	return hub.Walk(ctx, c, channel, from, to, fn)
}

// Holds reports whether the ring holds channel's records from seq on:
// Range from seq, and Next unless a record appended through the cache is
// not absorbed yet, are then answered from memory. A reader that bounds
// its reads of the underlying log needs no room for those.
func (c *Cache) Holds(channel string, seq uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state == stateReady && c.recs.len() > 0 && c.clearLocked(channel, seq)
}
