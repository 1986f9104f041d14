package logcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Coalesced reads of the log, for webhook catch-up and live sessions.
//
// A run is a sequence of consecutive records of one channel that are
// ResourceSync change notifications (XML, capability change-notification
// or changelist-notification, with from and until, every entry with its
// rs:md change), each starting at or after the previous one's until, all
// of one capability. CoalesceLog folds a run into one notification with
// changefeed.Coalesce: per resource, the net change with its final
// datetime, hash, length and links, covering [first from, last until].
// A run ends before a record that is not such a notification (other
// content is never coalesced), before one whose entries would take the
// result past MaxEntries, after MaxRecords, or at the end of the log.
//
// The run is read in batches and folded as it goes: at any time it holds
// the net entries so far (at most MaxEntries) and at most one batch of
// parsed notifications (coalesceBatch), never the whole run.

// CoalesceOptions tunes CoalesceLog.
type CoalesceOptions struct {
	// MaxEntries bounds the entries of the coalesced notification; 0 is
	// changefeed.DefaultMaxEntries.
	MaxEntries int
	// MaxRecords bounds the records covered; 0 is no limit.
	MaxRecords int
	// Filter, when not nil, is applied to each notification before it is
	// coalesced (changefeed.Filter.Apply).
	Filter *changefeed.Filter
	// To is the last sequence read; 0 is the log's last sequence when
	// CoalesceLog starts.
	To uint64
}

// CoalescedRun is one coalesced run of a channel's notifications.
type CoalescedRun struct {
	// Doc is the coalesced notification and Body its encoding, a valid
	// change notification (strict changefeed.Validate); nil when Records
	// is 0.
	Doc  *changefeed.Document
	Body []byte
	// First and Last are the log sequences of the first and last record
	// covered; Records counts the records covered.
	First, Last uint64
	Records     int
	// From and Until are the window covered: the first record's from and
	// the last one's until.
	From, Until time.Time
	// Topic, ContentType and ResourceSync are those of the last record;
	// Received is when the hub accepted the first one.
	Topic, ContentType, ResourceSync string
	Received                         time.Time
	// Epoch is the identity of the log the records come from.
	Epoch string
	// Next is where to go on: the sequence of the record that ended the run
	// (it was not included; when Records is 0 it is a record that does not
	// coalesce, to be sent as it is), or To+1 when End.
	Next uint64
	// End is true when the run ended at To (or the end of the log).
	End bool
}

// Record returns the run as a log record for delivery: sequence Last,
// window [From, Until], the coalesced body.
func (r *CoalescedRun) Record(channel string) wire.Record {
	return wire.Record{
		Seq: r.Last, Topic: r.Topic, Channel: channel, From: r.From, Until: r.Until,
		ContentType: r.ContentType, ResourceSync: r.ResourceSync, Received: r.Received,
		Entries: len(r.Doc.Entries), Body: r.Body, Epoch: r.Epoch,
	}
}

// errRunEnd stops a log read at the end of a run.
var errRunEnd = errors.New("end of run")

// coalesceBatch is how many parsed notifications are folded at once.
const coalesceBatch = 256

// ErrNotCoalescible is matched by the error of CoalesceLog when the run it
// read does not make a valid change notification; the run's records are
// then to be sent as they are.
var ErrNotCoalescible = errors.New("logcache: run does not coalesce into a valid notification")

// CoalesceLog reads the records of channel from sequence from on (up to
// opt.To) and coalesces the run they start (see the comment at the top of
// this file). It holds at most one batch of parsed notifications and the
// net entries at a time, whatever the length of the run.
//
// When the first record does not coalesce, Records is 0 and Next is its
// sequence. A run that does not make a valid notification gives an error
// matching ErrNotCoalescible with First, Last and Next set. Records removed
// by retention are skipped, as with hub.Log.Next.
func CoalesceLog(ctx context.Context, log hub.Log, channel string, from uint64, opt CoalesceOptions) (CoalescedRun, error) {
	if channel == "" {
		return CoalescedRun{}, errors.New("logcache: coalesce: a channel is required")
	}
	to := opt.To
	if to == 0 {
		_, last, err := log.Bounds(ctx)
		if err != nil {
			return CoalescedRun{}, fmt.Errorf("logcache: coalesce: %w", err)
		}
		to = last
	}
	b := newRunBuilder(opt)
	b.run.Next = from
	err := ReadRange(ctx, log, channel, from, to, false, func(rec wire.Record) error {
		ok, err := b.add(rec)
		if err != nil {
			return err
		}
		if !ok {
			b.run.Next = rec.Seq
			return errRunEnd
		}
		return nil
	})
	switch {
	case errors.Is(err, errRunEnd):
	case err != nil:
		return CoalescedRun{}, fmt.Errorf("logcache: coalesce %s from %d: %w", channel, from, err)
	default:
		b.run.End = true
		b.run.Next = max(to+1, from)
	}
	if err := b.finish(); err != nil {
		return b.run, err
	}
	return b.run, nil
}

// runBuilder folds a run's notifications as they are read.
type runBuilder struct {
	opt        CoalesceOptions
	run        CoalescedRun
	capability changefeed.Capability
	acc        *changefeed.Document   // the run so far, coalesced
	pending    []*changefeed.Document // read, not folded yet
	entries    int                    // entries of acc and pending
	lastUntil  time.Time
}

func newRunBuilder(opt CoalesceOptions) *runBuilder {
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = changefeed.DefaultMaxEntries
	}
	return &runBuilder{opt: opt}
}

// add adds rec to the run and reports whether it belongs to it; a record
// that does not ends the run and is left out.
func (b *runBuilder) add(rec wire.Record) (bool, error) {
	if b.opt.MaxRecords > 0 && b.run.Records >= b.opt.MaxRecords {
		return false, nil
	}
	doc := notificationOf(rec)
	if doc == nil {
		return false, nil
	}
	if b.run.Records > 0 && (doc.MD.Capability != b.capability || doc.MD.From.Time.Before(b.lastUntil)) {
		return false, nil
	}
	if f := b.opt.Filter; f != nil && !f.IsZero() {
		doc = f.Apply(doc)
	}
	n := len(doc.Entries)
	if b.entries+n > b.opt.MaxEntries {
		if err := b.fold(); err != nil {
			return false, err
		}
		if b.entries+n > b.opt.MaxEntries {
			return false, nil
		}
	}
	if b.run.Records == 0 {
		b.run.First, b.run.From, b.run.Received = rec.Seq, doc.MD.From.Time, rec.Received
		b.capability = doc.MD.Capability
	}
	b.run.Records++
	b.run.Last, b.run.Until = rec.Seq, doc.MD.Until.Time
	b.run.Topic, b.run.ContentType, b.run.ResourceSync, b.run.Epoch = rec.Topic, rec.ContentType, rec.ResourceSync, rec.Epoch
	b.lastUntil = doc.MD.Until.Time
	b.pending = append(b.pending, doc)
	b.entries += n
	if len(b.pending) >= coalesceBatch {
		return true, b.fold()
	}
	return true, nil
}

// fold coalesces the pending notifications into acc.
func (b *runBuilder) fold() error {
	if len(b.pending) == 0 {
		return nil
	}
	docs := b.pending
	if b.acc != nil {
		docs = append([]*changefeed.Document{b.acc}, docs...)
	}
	out, err := changefeed.Coalesce(docs, b.opt.MaxEntries)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotCoalescible, err)
	}
	if len(out) != 1 {
		return fmt.Errorf("%w: %d notifications for %d entries", ErrNotCoalescible, len(out), b.entries)
	}
	clear(b.pending)
	b.pending = b.pending[:0]
	b.acc = out[0]
	b.entries = len(b.acc.Entries)
	return nil
}

// finish folds what is pending, validates the result and encodes it.
func (b *runBuilder) finish() error {
	if b.run.Records == 0 {
		return nil
	}
	if err := b.fold(); err != nil {
		return err
	}
	if err := changefeed.Validate(b.acc, changefeed.Options{Mode: changefeed.Strict, MaxEntries: b.opt.MaxEntries}); err != nil {
		return fmt.Errorf("%w: records %d to %d: %w", ErrNotCoalescible, b.run.First, b.run.Last, err)
	}
	var buf bytes.Buffer
	if err := changefeed.Encode(&buf, b.acc); err != nil {
		return fmt.Errorf("%w: encoding records %d to %d: %w", ErrNotCoalescible, b.run.First, b.run.Last, err)
	}
	b.run.Doc, b.run.Body = b.acc, buf.Bytes()
	return nil
}

// notificationOf returns rec's body parsed when rec is a ResourceSync
// change notification that coalesces, else nil.
func notificationOf(rec wire.Record) *changefeed.Document {
	if !Coalescible(rec) {
		return nil
	}
	doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil || doc.Kind != changefeed.URLSet || doc.MD.From.IsZero() || doc.MD.Until.IsZero() {
		return nil
	}
	switch doc.MD.Capability {
	case changefeed.CapChangeNotification, changefeed.CapChangeListNotification:
	default:
		return nil
	}
	for i := range doc.Entries {
		if md := doc.Entries[i].MD; md == nil || md.Change == "" {
			return nil
		}
	}
	return doc
}

// Coalescible reports whether rec's metadata allows it to be a change
// notification that coalesces: XML with a window. The body decides.
func Coalescible(rec wire.Record) bool {
	return rec.IsXML() && !rec.From.IsZero() && !rec.Until.IsZero()
}

// ReadRange calls fn for each record of channel in [from, to], with the
// log's batched read when it has one; headersOnly allows records without
// their bodies.
func ReadRange(ctx context.Context, log hub.Log, channel string, from, to uint64, headersOnly bool, fn func(wire.Record) error) error {
	if headersOnly {
		if hl, ok := log.(headerRangeReader); ok {
			return hl.RangeHeaders(ctx, channel, from, to, fn)
		}
	}
	if rl, ok := log.(rangeReader); ok {
		return rl.Range(ctx, channel, from, to, fn)
	}
	return hub.Walk(ctx, log, channel, from, to, fn)
}
