package kvstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// bucketStream is a bucket's stream and the subject prefix of its keys,
// for reading the whole bucket in pages (scanPaged).
type bucketStream struct {
	stream jetstream.Stream
	prefix string // "$KV.<bucket>."
	// from, when not 0, has scanPaged read only the entries stored at this
	// stream sequence or later.
	from uint64
}

// openBucketStream returns kv's stream, or a zero bucketStream when the
// bucket does not tell it.
func openBucketStream(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) (bucketStream, error) {
	status, err := kv.Status(ctx)
	if err != nil {
		return bucketStream{}, fmt.Errorf("bucket %s: %w", kv.Bucket(), err)
	}
	bs, ok := status.(*jetstream.KeyValueBucketStatus)
	if !ok || bs.StreamInfo() == nil {
		return bucketStream{}, nil
	}
	name := bs.StreamInfo().Config.Name
	st, err := js.Stream(ctx, name)
	if err != nil {
		return bucketStream{}, fmt.Errorf("stream %s: %w", name, err)
	}
	return bucketStream{stream: st, prefix: "$KV." + kv.Bucket() + "."}, nil
}

// scanPageSize is how many entries scanPaged asks for at once.
const scanPageSize = 512

// scanPaged calls fn with the key, value (none when keysOnly) and revision
// of every entry of the bucket, as scanEach does, but pulls the entries a page at a
// time: a watch pushes the whole bucket at once, and a bucket of several
// hundred thousand entries pushed faster than read had the server drop the
// connection as a slow consumer (with every request on it). Without the
// bucket's stream it watches kv.
func scanPaged(ctx context.Context, kv jetstream.KeyValue, bs bucketStream, keysOnly bool, fn func(key string, val []byte, rev uint64) error) error {
	if bs.stream == nil {
		return scanEach(ctx, kv, ">", keysOnly, func(e jetstream.KeyValueEntry) error { return fn(e.Key(), e.Value(), e.Revision()) })
	}
	cc := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{bs.prefix + ">"},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:    keysOnly,
	}
	if bs.from > 0 { // a bucket keeps one revision a key: what is stored is each key's last
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, bs.from
	}
	return pull(ctx, bs, cc, func(key string, val []byte, deleted bool, seq uint64) (bool, error) {
		if deleted {
			return true, nil
		}
		return true, fn(key, val, seq)
	})
}

// pull reads bs's stream through an ordered consumer configured by cc, a
// page at a time, calling fn with each message's key, value, whether it
// is a deletion and its stream sequence until there is none left or fn
// says no more.
func pull(ctx context.Context, bs bucketStream, cc jetstream.OrderedConsumerConfig, fn func(key string, val []byte, deleted bool, seq uint64) (more bool, err error)) error {
	cons, err := bs.stream.OrderedConsumer(ctx, cc)
	if err != nil {
		return err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	if info.NumPending == 0 {
		return nil
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(scanPageSize))
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return err
		}
		meta, err := m.Metadata()
		if err != nil {
			return err
		}
		h := m.Headers()
		deleted := h.Get("KV-Operation") != "" || h.Get(jetstream.MarkerReasonHeader) != ""
		more, err := fn(strings.TrimPrefix(m.Subject(), bs.prefix), m.Data(), deleted, meta.Sequence.Stream)
		if err != nil || !more || meta.NumPending == 0 {
			return err
		}
	}
}
