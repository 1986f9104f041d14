package jslog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rshub/rshub/wire"
)

// Range tuning.
const (
	// RangeBatch is how many messages one fetch of Range asks for at most.
	RangeBatch = 1024
	// RangeBytes is how many message bytes one fetch of Range asks for, so
	// its memory stays bounded whatever the size of the records.
	RangeBytes = 1 << 20
	// rangeIdle bounds how long a fetch waits when the server has nothing
	// more to deliver; Range normally stops earlier, when the consumer
	// reports no pending messages.
	rangeIdle = 2 * time.Second
	// rangeInactive is when the server removes a range consumer its reader
	// could not delete.
	rangeInactive = time.Minute
	// rangeDirect is how many records Range reads with direct gets before
	// it creates a consumer for the rest. Most ranges are short (a closed
	// Change List, a quiet channel catching up), and creating a consumer
	// costs the server a count of its pending messages that grows with the
	// stream: with 10,000 channels in the log it was most of the cost of
	// rendering a closed list.
	rangeDirect = 16
)

// Range calls fn, in sequence order, for each record of channel (every
// channel when channel is "") whose sequence lies in [from, to], until fn
// returns an error, which Range returns. It reads the first records with
// direct gets, and the rest of a long run with one ephemeral consumer in
// batches of at most RangeBatch messages and RangeBytes bytes, far faster
// than one Next per record. Records removed by retention are skipped, as with Next; records
// appended while Range runs may or may not be seen.
func (l *Log) Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return l.rangeRead(ctx, channel, from, to, false, fn)
}

// RangeHeaders is Range without the bodies: each record has its metadata
// (sequence, channel, topic, from, until, entry count…) and a nil Body. An
// index of a long history is built from it at a fraction of the bytes.
func (l *Log) RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return l.rangeRead(ctx, channel, from, to, true, fn)
}

func (l *Log) rangeRead(ctx context.Context, channel string, from, to uint64, headersOnly bool, fn func(wire.Record) error) error {
	subj := l.Subject("")
	if channel != "" {
		if err := validChannel(channel); err != nil {
			return fmt.Errorf("jslog: range: %w", err)
		}
		subj = l.Subject(channel)
	}
	from = max(from, 1)
	if to < from {
		return nil
	}
	started := false
	err := l.do(ctx, func(ctx context.Context, h *handles) error {
		started = true
		return l.rangeOn(ctx, h, subj, from, to, headersOnly, fn)
	})
	if err != nil && !started {
		return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
	}
	return err
}

// rangeOn is rangeRead on the handles h.
func (l *Log) rangeOn(ctx context.Context, h *handles, subj string, from, to uint64, headersOnly bool, fn func(wire.Record) error) error {
	st := h.stream
	// direct reads first: an empty range returns at once instead of
	// waiting out a fetch, and a short one needs no consumer; the read
	// after the last of them only finds where the consumer starts, so that
	// a consumer is made only when a record is there to fetch
	for i := 0; ; i++ {
		m, err := st.GetMsg(ctx, from, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
		}
		if m.Sequence > to {
			return nil
		}
		if i == rangeDirect {
			from = m.Sequence
			break
		}
		if err := l.yield(h, m.Subject, m.Header, m.Data, m.Sequence, headersOnly, fn); err != nil {
			return err
		}
		if m.Sequence == to {
			return nil
		}
		from = m.Sequence + 1
	}
	// an ephemeral consumer without acks, deleted at the end: deleting it
	// also ends a fetch left unfinished when the range ends mid-batch
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubjects:    []string{subj},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: rangeInactive,
		HeadersOnly:       headersOnly,
	})
	if err != nil {
		return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
	}
	defer func() {
		_ = st.DeleteConsumer(context.WithoutCancel(ctx), cons.CachedInfo().Name)
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, done, err := l.fetchBatch(ctx, h, cons, subj, to, headersOnly, fn)
		if err != nil || done {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// yield decodes the message seq of a range read on h (without its body
// when headersOnly) and passes it to fn; a quarantined message is skipped.
func (l *Log) yield(h *handles, subject string, hdr nats.Header, data []byte, seq uint64, headersOnly bool, fn func(wire.Record) error) error {
	rec, ok := l.decode(h, subject, hdr, data, seq, headersOnly)
	if !ok {
		return nil
	}
	return fn(rec)
}

// fetchBatch reads one batch of cons for rangeOn, calling fn for each
// record up to to; done reports that the range has ended. The fetch ends
// with ctx, and after rangeIdle when the server has nothing to deliver.
func (l *Log) fetchBatch(ctx context.Context, h *handles, cons jetstream.Consumer, subj string, to uint64, headersOnly bool, fn func(wire.Record) error) (n int, done bool, err error) {
	fctx, cancel := context.WithTimeout(ctx, rangeIdle)
	defer cancel()
	msgs, err := cons.Fetch(RangeBatch, jetstream.FetchMaxBytes(RangeBytes), jetstream.FetchContext(fctx))
	if err != nil {
		return 0, true, fmt.Errorf("jslog: range %s: %w", subj, err)
	}
	for m := range msgs.Messages() {
		n++
		md, err := m.Metadata()
		if err != nil {
			return n, true, fmt.Errorf("jslog: range %s: %w", subj, err)
		}
		seq := md.Sequence.Stream
		if seq > to {
			return n, true, nil // the rest of the batch expires with the fetch
		}
		if err := l.yield(h, m.Subject(), m.Headers(), m.Data(), seq, headersOnly, fn); err != nil {
			return n, true, err
		}
		if seq == to || md.NumPending == 0 {
			return n, true, nil
		}
	}
	if err := msgs.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return n, true, fmt.Errorf("jslog: range %s: %w", subj, err)
	}
	if err := ctx.Err(); err != nil {
		return n, true, err
	}
	return n, false, nil
}
