package jslog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

// Range tuning.
const (
	// RangeBytes is how many message bytes one fetch of Range asks for, so
	// its memory stays bounded whatever the size of the records.
	RangeBytes = 1 << 20
	// rangeIdle bounds how long a fetch waits when the server has nothing
	// more to deliver; Range normally stops earlier, when the consumer
	// reports no pending messages.
	rangeIdle = 2 * time.Second
)

// Range calls fn, in sequence order, for each record of channel (every
// channel when channel is "") whose sequence lies in [from, to], until fn
// returns an error, which Range returns. It reads with one ordered consumer
// in batches of RangeBytes, far faster than one Next per record for long
// runs. Records removed by retention are skipped, as with Next; records
// appended while Range runs may or may not be seen.
func (l *Log) Range(ctx context.Context, channel string, from, to uint64, fn func(hub.Record) error) error {
	subj := l.cfg.SubjectPrefix + ".>"
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
	// one direct read first: an empty range returns at once instead of
	// waiting out a fetch
	first, err := l.stream.GetMsg(ctx, from, jetstream.WithGetMsgSubject(subj))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
	}
	if first.Sequence > to {
		return nil
	}
	from = first.Sequence
	cons, err := l.js.OrderedConsumer(ctx, l.cfg.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subj},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
	})
	if err != nil {
		return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := cons.FetchBytes(RangeBytes, jetstream.FetchMaxWait(rangeIdle))
		if err != nil {
			return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
		}
		n := 0
		for m := range msgs.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("jslog: range %s: %w", subj, err)
			}
			seq := md.Sequence.Stream
			if seq > to {
				return nil // the rest of the batch expires with the fetch
			}
			rec, err := DecodeMsg(m.Subject(), m.Headers(), m.Data(), seq)
			if err != nil {
				return fmt.Errorf("jslog: range: seq %d: %w", seq, err)
			}
			l.observe(seq)
			if err := fn(rec); err != nil {
				return err
			}
			if seq == to || md.NumPending == 0 {
				return nil
			}
		}
		if err := msgs.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("jslog: range %s: %w", subj, err)
		}
		if n == 0 {
			return nil
		}
	}
}
