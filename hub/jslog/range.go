package jslog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

// Range tuning.
const (
	// RangeBatch is how many messages one fetch of Range asks for.
	RangeBatch = 512
	// rangeIdle bounds how long a fetch waits when the server has nothing
	// more to deliver; Range normally stops earlier, when the consumer
	// reports no pending messages.
	rangeIdle = 2 * time.Second
)

// Range calls fn, in sequence order, for each record of channel (every
// channel when channel is "") whose sequence lies in [from, to], until fn
// returns an error, which Range returns. It reads with one ordered consumer
// in batches of RangeBatch, far faster than one Next per record for long
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
		batch := RangeBatch
		if to-from < uint64(batch) {
			batch = int(to-from) + 1
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := cons.Fetch(batch, jetstream.FetchMaxWait(rangeIdle))
		if err != nil {
			return fmt.Errorf("jslog: range %s from %d: %w", subj, from, err)
		}
		n := 0
		done := false
		for m := range msgs.Messages() {
			if done {
				continue // drain the batch
			}
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("jslog: range %s: %w", subj, err)
			}
			seq := md.Sequence.Stream
			if seq > to {
				done = true
				continue
			}
			rec, err := DecodeMsg(m.Subject(), m.Headers(), m.Data(), seq)
			if err != nil {
				return fmt.Errorf("jslog: range: seq %d: %w", seq, err)
			}
			l.observe(seq)
			if err := fn(rec); err != nil {
				return err
			}
			from = seq + 1
			if seq == to || seq == math.MaxUint64 || md.NumPending == 0 {
				done = true
			}
		}
		if err := msgs.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("jslog: range %s: %w", subj, err)
		}
		if done || n == 0 {
			return nil
		}
	}
}
