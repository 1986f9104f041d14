package hub

import (
	"context"
	"errors"

	"github.com/rshub/rshub/wire"
)

// Walk calls fn, in sequence order, for each record of channel (every
// channel when channel is "") in log whose sequence lies in [from, to], one
// Next at a time, until fn returns an error, which Walk returns. Records
// removed by retention are skipped.
func Walk(ctx context.Context, log Log, channel string, from, to uint64, fn func(wire.Record) error) error {
	for seq := max(from, 1); seq <= to; {
		rec, err := log.Next(ctx, channel, seq)
		if errors.Is(err, ErrNotFound) {
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
