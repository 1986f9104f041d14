package jslog_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

func TestRange_ReadsOneChannelsRecordsInOrderWithinBounds(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	var a []uint64
	for i := range 1200 {
		ch := "a"
		if i%3 == 0 {
			ch = "b"
		}
		seq := mustAppend(t, l, record(ch, i))
		if ch == "a" {
			a = append(a, seq)
		}
	}
	collect := func(channel string, from, to uint64) []uint64 {
		var got []uint64
		err := l.Range(ctxT(t), channel, from, to, func(r wire.Record) error {
			if channel != "" && r.Channel != channel {
				t.Errorf("record %d of channel %s", r.Seq, r.Channel)
			}
			got = append(got, r.Seq)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := collect("a", 0, ^uint64(0)); !slices.Equal(got, a) {
		t.Errorf("whole channel: %d records, want %d", len(got), len(a))
	}
	if got := collect("a", a[10], a[700]); !slices.Equal(got, a[10:701]) {
		t.Errorf("bounded range: got %d records, want %d", len(got), 701-10)
	}
	// short ranges are read with direct gets, longer ones go on with a
	// consumer: around the switch
	for _, n := range []int{1, 15, 16, 17, 33} {
		if got := collect("a", a[4]+1, a[5+n-1]); !slices.Equal(got, a[5:5+n]) {
			t.Errorf("range of %d records: got %v, want %v", n, got, a[5:5+n])
		}
	}
	if got := collect("a", a[len(a)-1]+1, ^uint64(0)); len(got) != 0 {
		t.Errorf("range past the end: %v", got)
	}
	if got := collect("", 1, 1200); len(got) != 1200 {
		t.Errorf("all channels: %d records, want 1200", len(got))
	}
	stop := errors.New("stop")
	n := 0
	err := l.Range(ctxT(t), "a", 0, ^uint64(0), func(wire.Record) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn error: err %v after %d calls, want stop after 1", err, n)
	}
}

func TestHeaders_EntriesRoundTrip(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	rec := record("a", 1)
	rec.Entries = 42
	seq := mustAppend(t, l, rec)
	got, err := l.Next(ctxT(t), "a", seq)
	if err != nil {
		t.Fatal(err)
	}
	if got.Entries != 42 {
		t.Errorf("Entries = %d, want 42", got.Entries)
	}
	if h := jslog.EncodeHeaders(wire.Record{Channel: "a"}); h.Get(wire.HeaderEntries) != "" {
		t.Errorf("a record without entries has header %s", wire.HeaderEntries)
	}
}

// RangeHeaders gives every record's metadata without its body.
func TestRangeHeaders_MetadataWithoutBodies(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []wire.Record
	for i := range 40 {
		r := record("a", i)
		r.From, r.Until, r.Entries = from.Add(time.Duration(i)*time.Minute), from.Add(time.Duration(i+1)*time.Minute), i+1
		r.Seq = mustAppend(t, l, r)
		want = append(want, r)
	}
	var got []wire.Record
	if err := l.RangeHeaders(ctxT(t), "a", 1, ^uint64(0), func(r wire.Record) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if r.Seq != w.Seq || r.Topic != w.Topic || !r.From.Equal(w.From) || !r.Until.Equal(w.Until) || r.Entries != w.Entries || r.Key != w.Key || r.Body != nil {
			t.Fatalf("record %d: %+v (body %d bytes), want %+v without body", i, r, len(r.Body), w)
		}
	}
}
