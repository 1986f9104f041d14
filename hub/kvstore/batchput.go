package kvstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Batched puts: many keys of a bucket written at once, as the cursors of a
// delivery flush and the attempt logs of an attempt-log flush are. Each
// put is published without waiting for its answer, at most putWindow
// awaiting theirs at a time, on one connection, so they land in the order
// sent; a put counts as stored only once the stream acknowledged it. The
// answers come to an inbox of the batch's own, each put's named by its
// index, rather than through the JetStream client's asynchronous publish
// (a future with two channels, a shared map under a lock and a reflection
// decode of each acknowledgement: about a third of the client's CPU per
// put). A synchronous put per key costs twice the CPU
// (BenchmarkStore_Cursors) and a round trip each.

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
	sent := false
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		inbox := b.nc.NewInbox() + "."
		answers := make(chan *nats.Msg, min(len(puts), putWindow)) // never full: at most that many await
		sub, err := b.nc.ChanSubscribe(inbox+"*", answers)
		if err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
		sent = true
		prefix := "$KV." + kv(b).Bucket() + "."
		awaiting := make([]bool, len(puts))
		n := 0 // puts awaiting their answer
		answer := func(m *nats.Msg) {
			i, err := strconv.Atoi(strings.TrimPrefix(m.Subject, inbox))
			if err != nil || i < 0 || i >= len(puts) || !awaiting[i] {
				return // not one of this batch's
			}
			awaiting[i], n = false, n-1
			if _, err := pubAck(m); err != nil {
				fail(i, err)
			}
		}
		for i, p := range puts {
			for n >= putWindow && ctx.Err() == nil {
				select {
				case m := <-answers:
					answer(m)
				case <-ctx.Done():
				}
			}
			err := ctx.Err()
			if err == nil {
				err = b.nc.PublishRequest(prefix+p.key, inbox+strconv.Itoa(i), p.val)
			}
			if err != nil {
				fail(i, err)
				continue
			}
			awaiting[i], n = true, n+1
		}
		for n > 0 && ctx.Err() == nil {
			select {
			case m := <-answers:
				answer(m)
			case <-ctx.Done():
			}
		}
		for i, w := range awaiting {
			if w { // unanswered: stored or not, it does not count
				fail(i, ctx.Err())
			}
		}
		return nil
	})
	if err != nil && !sent { // not connected: nothing was sent
		for i := range puts {
			fail(i, err)
		}
	}
}

// pubAck returns the sequence a stream's answer to a put tells it stored
// the message at, or the error it tells.
func pubAck(m *nats.Msg) (uint64, error) {
	if st := m.Header.Get("Status"); st != "" && len(m.Data) == 0 {
		if st == "503" {
			return 0, jetstream.ErrNoStreamResponse
		}
		return 0, fmt.Errorf("put answered with status %s %s", st, m.Header.Get("Description"))
	}
	var ack struct {
		Error  *jetstream.APIError `json:"error"`
		Stream string              `json:"stream"`
		Seq    uint64              `json:"seq"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		return 0, fmt.Errorf("decode the answer to a put: %w", err)
	}
	if ack.Error != nil {
		return 0, ack.Error
	}
	if ack.Stream == "" {
		return 0, errors.New("the answer to a put names no stream")
	}
	return ack.Seq, nil
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
