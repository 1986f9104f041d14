package jslog_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// publishRaw stores a message straight into the log's stream, past the
// hub's writer, and returns its sequence.
func publishRaw(t *testing.T, nc *nats.Conn, subject string, hdr nats.Header, body []byte) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.PublishMsg(ctxT(t), &nats.Msg{Subject: subject, Header: hdr, Data: body})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// malformed are messages no reader can ever decode, one per kind of bad
// header.
var malformed = []nats.Header{
	{wire.HeaderUntil: {"not a time"}},
	{wire.HeaderTopic: {"=?UTF-8?B?not base64?="}},
	{wire.HeaderEntries: {"-3"}},
	{wire.HeaderReceived: {"2024-13-45T99:00:00Z"}},
}

// TestQuarantine_ReadersSkipMessagesThatNeverDecode writes messages with
// bad headers between good records, directly and beyond the range's direct
// reads, and checks that Next, Range and RangeHeaders, of every channel and
// of one, return exactly the good records, and that each bad message is
// counted and listed once however often it is read.
func TestQuarantine_ReadersSkipMessagesThatNeverDecode(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	var good, bad []uint64
	for i := range 40 {
		if i%10 == 3 {
			bad = append(bad, publishRaw(t, nc, l.Subject("a"), malformed[len(bad)], []byte("<urlset/>")))
			continue
		}
		good = append(good, mustAppend(t, l, record("a", i)))
	}
	reads := map[string]func(fn func(wire.Record) error) error{
		"Walk": func(fn func(wire.Record) error) error {
			return hub.Walk(ctxT(t), l, "", 1, math.MaxUint64, fn)
		},
		"Walk a": func(fn func(wire.Record) error) error {
			return hub.Walk(ctxT(t), l, "a", 1, math.MaxUint64, fn)
		},
		"Range": func(fn func(wire.Record) error) error { return l.Range(ctxT(t), "", 1, math.MaxUint64, fn) },
		"Range a": func(fn func(wire.Record) error) error {
			return l.Range(ctxT(t), "a", 1, math.MaxUint64, fn)
		},
		"RangeHeaders": func(fn func(wire.Record) error) error {
			return l.RangeHeaders(ctxT(t), "", 1, math.MaxUint64, fn)
		},
	}
	for name, read := range reads {
		var got []uint64
		if err := read(func(r wire.Record) error { got = append(got, r.Seq); return nil }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, good) {
			t.Fatalf("%s read %v; want the good records %v", name, got, good)
		}
	}
	if rec, err := l.Next(ctxT(t), "a", bad[0]); err != nil || rec.Seq != bad[0]+1 {
		t.Fatalf("Next at the quarantined %d = %d, %v; want %d", bad[0], rec.Seq, err, bad[0]+1)
	}
	total, list := l.QuarantinedTotal(), l.Quarantined()
	if total != uint64(len(bad)) || len(list) != len(bad) {
		t.Fatalf("Quarantined = %d, %d listed; want %d", total, len(list), len(bad))
	}
	for i, q := range list {
		if q.Seq != bad[i] || q.Channel != "a" || q.Reason == "" || q.Size < len("<urlset/>") || q.At.IsZero() {
			t.Errorf("quarantined[%d] = %+v; want seq %d of channel a with a reason and a size", i, q, bad[i])
		}
	}
}

// TestQuarantine_ReadFailuresAreNotQuarantined checks that a read that
// fails (the connection is gone) is an error for the reader to retry,
// never a quarantine.
func TestQuarantine_ReadFailuresAreNotQuarantined(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	seq := mustAppend(t, l, record("a", 1))
	nc.Close()
	if _, err := l.Next(ctxT(t), "", seq); err == nil || errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("Next on a closed connection = %v; want a read error", err)
	}
	if err := l.Range(ctxT(t), "", 1, seq, func(wire.Record) error { return nil }); err == nil {
		t.Fatal("Range on a closed connection succeeded")
	}
	if total, list := l.QuarantinedTotal(), l.Quarantined(); total != 0 || len(list) != 0 {
		t.Fatalf("Quarantined = %d %v after read failures; want none", total, list)
	}
}

// TestQuarantine_ConditionalAppendsGoOnAfterAQuarantinedMessage checks
// that a channel whose subject has only quarantined messages after the
// writer's last record still takes a conditional append (the writer would
// otherwise be refused forever), while a real record by another writer
// still makes it a conflict.
func TestQuarantine_ConditionalAppendsGoOnAfterAQuarantinedMessage(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	last := mustAppend(t, l, record("a", 1))
	for _, hdr := range malformed[:2] {
		publishRaw(t, nc, l.Subject("a"), hdr, nil)
	}
	seq, _, err := l.AppendAfter(ctxT(t), record("a", 2), last)
	if err != nil {
		t.Fatalf("AppendAfter(%d) past quarantined messages: %v", last, err)
	}
	if first := publishRaw(t, nc, l.Subject("b"), malformed[2], nil); first == 0 {
		t.Fatal("no sequence")
	}
	if _, _, err := l.AppendAfter(ctxT(t), record("b", 1), 0); err != nil {
		t.Fatalf("AppendAfter(0) on a channel holding only a quarantined message: %v", err)
	}
	publishRaw(t, nc, l.Subject("a"), jslog.EncodeHeaders(record("a", 3)), []byte("<urlset/>"))
	if _, _, err := l.AppendAfter(ctxT(t), record("a", 4), seq); !errors.Is(err, hub.ErrConflict) {
		t.Fatalf("AppendAfter(%d) after another writer's record = %v; want a conflict", seq, err)
	}
}
