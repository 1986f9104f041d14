package jslog

import (
	"cmp"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

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

// Quarantined returns how many messages readers have skipped because they
// can never be decoded, and the ones still listed (at most MaxQuarantined),
// by sequence. It does no I/O.
func (l *Log) Quarantined() (total uint64, list []Quarantined) {
	q := &l.quarantine
	q.mu.Lock()
	defer q.mu.Unlock()
	list = make([]Quarantined, 0, len(q.bySeq))
	for _, e := range q.bySeq {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b Quarantined) int { return cmp.Compare(a.Seq, b.Seq) })
	return q.total, list
}
