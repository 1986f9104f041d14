package jslog

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/wire"
)

// MaxQuarantined bounds the quarantined records a Log lists; beyond it the
// lowest sequences are forgotten (and counted again should a reader meet
// them again).
const MaxQuarantined = 1000

// Quarantined is a message of the stream that can never be decoded into a
// record (a header that is not what the protocol writes: written by
// something other than the hub, or damaged). Every reader skips it, as it
// skips a record removed by retention; it stays in the stream for an
// operator to inspect with any NATS client.
type Quarantined struct {
	Seq     uint64    `json:"seq"`
	Channel string    `json:"channel,omitempty"` // from the subject; "" when it names none of the log's
	Reason  string    `json:"reason"`            // why it does not decode
	Size    int       `json:"size"`              // bytes of its headers and body as read
	At      time.Time `json:"at"`                // when this process first skipped it
}

// quarantine is a Log's list of the messages its readers skipped: each
// counted and logged once.
type quarantine struct {
	mu    sync.Mutex
	bySeq map[uint64]Quarantined
	total uint64
}

// add quarantines the message seq of channel that failed to decode with
// err, unless it already is.
func (q *quarantine) add(log *slog.Logger, channel string, hdr nats.Header, data []byte, seq uint64, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.bySeq[seq]; ok {
		return
	}
	if q.bySeq == nil {
		q.bySeq = map[uint64]Quarantined{}
	}
	if len(q.bySeq) >= MaxQuarantined {
		delete(q.bySeq, slices.Min(slices.Collect(maps.Keys(q.bySeq))))
	}
	size := len(data)
	for k, vs := range hdr {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	e := Quarantined{Seq: seq, Channel: wire.Clip(channel), Reason: wire.Clip(err.Error()), Size: size, At: time.Now().UTC()}
	q.bySeq[seq] = e
	q.total++
	log.Error("jslog: quarantined a message that can never be decoded; readers skip it",
		"seq", seq, "channel", e.Channel, "size", size, "err", e.Reason)
}

// QuarantinedTotal returns how many messages this process's readers have
// skipped because they can never be decoded. It does no I/O.
func (l *Log) QuarantinedTotal() uint64 {
	l.quarantine.mu.Lock()
	defer l.quarantine.mu.Unlock()
	return l.quarantine.total
}

// Quarantined returns the quarantined messages still listed (at most
// MaxQuarantined), by sequence. It does no I/O.
func (l *Log) Quarantined() []Quarantined {
	q := &l.quarantine
	q.mu.Lock()
	list := slices.Collect(maps.Values(q.bySeq))
	q.mu.Unlock()
	slices.SortFunc(list, func(a, b Quarantined) int { return cmp.Compare(a.Seq, b.Seq) })
	return list
}

// maxQuarantinedRun bounds how many messages quarantinedAfter reads.
const maxQuarantinedRun = 64

// quarantinedAfter reports whether every message of channel after lastSeq
// (at most maxQuarantinedRun of them) is quarantined, and returns the last
// one's sequence: the channel's subject moved on but its records did not.
func (l *Log) quarantinedAfter(ctx context.Context, channel string, lastSeq uint64) (uint64, bool) {
	subj := l.Subject(channel)
	last := uint64(0)
	for range maxQuarantinedRun {
		var m *jetstream.RawStreamMsg
		var ok bool
		err := l.do(ctx, func(ctx context.Context, h *handles) (err error) {
			if m, err = h.stream.GetMsg(ctx, max(lastSeq, last)+1, jetstream.WithGetMsgSubject(subj)); err == nil {
				_, ok = l.decode(h, m.Subject, m.Header, m.Data, m.Sequence, true)
			}
			return err
		})
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return last, last > 0
		case err != nil || ok:
			return 0, false // a record, or no answer: the conflict stands
		}
		last = m.Sequence
	}
	return 0, false
}
