package kvstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// cursorWindow bounds the cursor puts of PutCursors awaiting their acks.
const cursorWindow = 256

// PutCursors stores the delivery cursors of many subscriptions (by
// subscription ID) at once and returns the error of each one not stored;
// nil when all were. The puts are published without waiting for each
// one's ack, at most cursorWindow unacknowledged at a time, on one
// connection, so they land in the order sent; a cursor counts as stored
// only once its ack came. Each subscription is written at most once per
// call, as the map holds one cursor per ID.
func (s *Store) PutCursors(ctx context.Context, cursors map[string]hub.Cursor) map[string]error {
	var failed map[string]error
	fail := func(id string, err error) {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[id] = fmt.Errorf("kvstore: put cursor %q: %w", wire.Clip(id), err)
	}
	type put struct {
		id  string
		ack jetstream.PubAckFuture
	}
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		prefix := "$KV." + b.cursors.Bucket() + "."
		ring, n := make([]put, min(len(cursors), cursorWindow)), 0 // the puts awaiting acks, oldest at n
		wait := func(p put) {
			select {
			case <-p.ack.Ok():
			case err := <-p.ack.Err():
				fail(p.id, err)
			case <-ctx.Done():
				fail(p.id, ctx.Err())
			}
		}
		for id, c := range cursors {
			k, err := key("subscription ID", id)
			var val []byte
			if err == nil {
				val, err = json.Marshal(cursorValue{Cursor: c, SubID: id})
			}
			var ack jetstream.PubAckFuture
			if err == nil && ctx.Err() == nil {
				ack, err = b.js.PublishAsync(prefix+k, val)
			}
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				fail(id, err)
				continue
			}
			i := n % len(ring)
			if n >= len(ring) {
				wait(ring[i])
			}
			ring[i] = put{id, ack}
			n++
		}
		for i := max(0, n-len(ring)); i < n; i++ {
			wait(ring[i%len(ring)])
		}
		return nil
	})
	if err != nil { // not connected: nothing was sent
		for id := range cursors {
			fail(id, err)
		}
	}
	return failed
}
