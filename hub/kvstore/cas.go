package kvstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// casJSON stores v at key if its revision is still rev (0: key absent) and
// reports whether it lost the race.
func casJSON(ctx context.Context, b *buckets, kv jetstream.KeyValue, key string, rev uint64, v any) (conflict bool, err error) {
	val, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	_, conflict, err = casBytes(ctx, b, kv, key, rev, val)
	return conflict, err
}

// casBytes stores val at key if its revision is still rev (0: key absent,
// or deleted as the client's Create has it), and returns the new revision
// or whether it lost the race. The put is a request of its own with the
// expected revision in a header, as the client's Update sends it, without
// the client's check of the key by regular expression (keys are digests,
// valid by construction) and its reflection decode of the answer.
func casBytes(ctx context.Context, b *buckets, kv jetstream.KeyValue, key string, rev uint64, val []byte) (newRev uint64, conflict bool, err error) {
	newRev, conflict, err = putExpecting(ctx, b.nc, "$KV."+kv.Bucket()+"."+key, val, rev)
	if conflict && rev == 0 { // deleted rather than absent? the client's Create tells
		newRev, err = kv.Create(ctx, key, val)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return 0, true, nil
		}
		return newRev, false, err
	}
	return newRev, conflict, err
}

// putTimeout bounds a put whose context has no deadline, as the JetStream
// client does.
const putTimeout = 5 * time.Second

// putExpecting publishes val to subject if the subject's last sequence in
// its stream is rev, and returns the sequence it was stored at; conflict
// reports that the last sequence is another.
func putExpecting(ctx context.Context, nc *nats.Conn, subject string, val []byte, rev uint64) (seq uint64, conflict bool, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, putTimeout)
		defer cancel()
	}
	m := &nats.Msg{Subject: subject, Data: val, Header: nats.Header{jetstream.ExpectedLastSubjSeqHeader: {strconv.FormatUint(rev, 10)}}}
	resp, err := nc.RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) {
		return 0, false, jetstream.ErrNoStreamResponse
	}
	if err != nil {
		return 0, false, err
	}
	seq, err = pubAck(resp)
	if e, ok := errors.AsType[*jetstream.APIError](err); ok &&
		(e.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || e.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return 0, true, nil
	}
	return seq, false, err
}
