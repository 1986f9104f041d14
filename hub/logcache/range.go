package logcache

import (
	"context"
	"errors"

	"github.com/rshub/rshub/hub"
)

// rangeReader is a log that reads a run of records in one pass, as
// jslog.Log does with a batched consumer.
type rangeReader interface {
	Range(ctx context.Context, channel string, from, to uint64, fn func(hub.Record) error) error
}

// Range calls fn, in sequence order, for each record of channel (every
// channel when channel is "") whose sequence lies in [from, to], until fn
// returns an error, which Range returns. Long runs are read by the
// underlying log's own range read when it has one (the cache holds only
// the tail); otherwise record by record through the cache.
func (c *Cache) Range(ctx context.Context, channel string, from, to uint64, fn func(hub.Record) error) error {
	if rl, ok := c.log.(rangeReader); ok {
		return rl.Range(ctx, channel, from, to, fn)
	}
	for seq := max(from, 1); seq <= to; {
		rec, err := c.Next(ctx, channel, seq)
		if errors.Is(err, hub.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Seq > to {
			return nil
		}
		if err := fn(rec); err != nil {
			return err
		}
		seq = rec.Seq + 1
	}
	return nil
}
