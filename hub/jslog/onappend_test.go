package jslog_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// told collects what a Log's OnAppend function is told.
type told struct {
	mu   sync.Mutex
	recs []wire.Record
}

func (tl *told) add(r wire.Record) {
	tl.mu.Lock()
	tl.recs = append(tl.recs, r)
	tl.mu.Unlock()
}

func (tl *told) all() []wire.Record {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]wire.Record(nil), tl.recs...)
}

// OnAppend tells each record appended as a reader reads it back, every
// field and the log's epoch, with a body of its own, before Append
// returns; a duplicate and a conditional append that lost are not told.
func TestOnAppend_TellsEachRecordAsReadersReadIt(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	var tl told
	l.OnAppend(tl.add)
	rec := wire.Record{
		Topic: "https://example.org/a/changelist.xml", Channel: "a", ContentType: "application/xml",
		ResourceSync: "https://example.org/capabilitylist.xml", Key: "a-1", Entries: 3, Private: true,
		From:        time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
		Until:       time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC),
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "rshub=1",
		Body: []byte("<urlset>1</urlset>"),
	}
	seq := mustAppend(t, l, rec)
	got := tl.all()
	if len(got) != 1 {
		t.Fatalf("told %d records by the time Append returned, want 1", len(got))
	}
	read, err := l.Next(ctxT(t), "a", seq)
	if err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if err := sameRecord(g, read); err != nil {
		t.Fatalf("told vs read: %v", err)
	}
	if g.Private != read.Private || g.TraceParent != read.TraceParent || g.TraceState != read.TraceState ||
		g.Entries != read.Entries || g.Epoch != read.Epoch || g.Epoch == "" || !g.Private || g.Entries != 3 {
		t.Fatalf("told %+v, read %+v", g, read)
	}
	rec.Body[1] = 'X' // the appender's buffer is its own again
	if g.Body[1] == 'X' {
		t.Fatal("the record told shares its body with the appender's")
	}

	if _, dup, err := l.Append(ctxT(t), rec); err != nil || !dup {
		t.Fatalf("append again = dup %v, %v; want a duplicate", dup, err)
	}
	if _, _, err := l.AppendAfter(ctxT(t), record("a", 2), seq-1); !errors.Is(err, hub.ErrConflict) {
		t.Fatalf("conditional append on a stale sequence = %v, want a conflict", err)
	}
	if n := len(tl.all()); n != 1 {
		t.Fatalf("told %d records after a duplicate and a conflict, want 1", n)
	}
	next := mustAppend(t, l, record("b", 3))
	if got := tl.all(); len(got) != 2 || got[1].Seq != next || got[1].Channel != "b" {
		t.Fatalf("told %+v, want a second record at %d", got, next)
	}
}
