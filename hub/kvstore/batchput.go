package kvstore

import (
	"context"
	"fmt"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Batched puts: many keys of a bucket written at once, as the cursors of a
// delivery flush and the attempt logs of an attempt-log flush are. Each
// put is published without waiting for its ack, at most putWindow awaiting
// acks at a time, on one connection, so they land in the order sent; a put
// counts as stored only once its ack came. A synchronous put per key costs
// twice the CPU (BenchmarkStore_Cursors) and a round trip each.

// putWindow bounds the puts of a batch awaiting their acks.
const putWindow = 256

// batchPut is one value for a key of a bucket.
type batchPut struct {
	key string
	val []byte
}

// putBatch writes puts to kv and calls fail with the index and error of
// each one not stored, on the calling goroutine.
func (s *Store) putBatch(ctx context.Context, kv func(*buckets) jetstream.KeyValue, puts []batchPut, fail func(i int, err error)) {
	if len(puts) == 0 {
		return
	}
	type pending struct {
		i   int
		ack jetstream.PubAckFuture
	}
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		prefix := "$KV." + kv(b).Bucket() + "."
		wait := func(p pending) {
			select {
			case <-p.ack.Ok():
			case err := <-p.ack.Err():
				fail(p.i, err)
			case <-ctx.Done():
				fail(p.i, ctx.Err())
			}
		}
		ring, n := make([]pending, min(len(puts), putWindow)), 0 // awaiting acks, the oldest at n
		for i, p := range puts {
			err := ctx.Err()
			var ack jetstream.PubAckFuture
			if err == nil {
				ack, err = b.js.PublishAsync(prefix+p.key, p.val)
			}
			if err != nil {
				fail(i, err)
				continue
			}
			j := n % len(ring)
			if n >= len(ring) {
				wait(ring[j])
			}
			ring[j] = pending{i, ack}
			n++
		}
		for k := max(0, n-len(ring)); k < n; k++ {
			wait(ring[k%len(ring)])
		}
		return nil
	})
	if err != nil { // not connected: nothing was sent
		for i := range puts {
			fail(i, err)
		}
	}
}

// PutCursors stores the delivery cursors of many subscriptions (by
// subscription ID) at once, as batched puts, and returns the error of each
// one not stored; nil when all were.
func (s *Store) PutCursors(ctx context.Context, cursors map[string]hub.Cursor) map[string]error {
	var failed map[string]error
	fail := func(id string, err error) {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[id] = fmt.Errorf("kvstore: put cursor %q: %w", wire.Clip(id), err)
	}
	puts, ids := make([]batchPut, 0, len(cursors)), make([]string, 0, len(cursors))
	for id, c := range cursors {
		k, err := key("subscription ID", id)
		var val []byte
		if err == nil {
			val, err = json.Marshal(cursorValue{Cursor: c, SubID: id})
		}
		if err != nil {
			fail(id, err)
			continue
		}
		puts, ids = append(puts, batchPut{k, val}), append(ids, id)
	}
	s.putBatch(ctx, func(b *buckets) jetstream.KeyValue { return b.cursors }, puts, func(i int, err error) { fail(ids[i], err) })
	return failed
}
