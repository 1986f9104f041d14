package logcache_test

import (
	"testing"
	"time"

	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// appendTold appends r to log without a change signal and returns it as
// an appender would tell it (jslog.Log.OnAppend): with its sequence.
func appendTold(log *memLog, r wire.Record) wire.Record {
	r.Seq = log.appendQuiet(r)
	return r
}

// A record offered as the next one is absorbed at once: its readers are
// woken and answered from memory, and the cache never reads it from the
// log. One offered out of turn, again, or before Run is left alone.
func TestOffer_NextRecordAbsorbedWithoutReadingTheLog(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{Poll: time.Hour}) // no change signal, no poll: only Offer
	early := appendTold(log, rec("a", 0))
	c.Offer(early) // Run not started: the ring is not positioned yet
	start(t, c)
	if st := c.Stats(); st.Records != 0 || st.Last != early.Seq {
		t.Fatalf("after an offer before Run: %d records, Last %d; want none, positioned after %d", st.Records, st.Last, early.Seq)
	}

	first := appendTold(log, rec("a", 1))
	changed := c.Changed()
	nexts := log.nexts.Load()
	c.Offer(first)
	if got := c.Stats().Last; got != first.Seq {
		t.Fatalf("Last = %d after offering the next record, want %d", got, first.Seq)
	}
	select {
	case <-changed:
	default:
		t.Fatal("an offered record did not wake the readers")
	}
	got, err := c.Next(ctxT(t), "a", first.Seq)
	if err != nil || got.Seq != first.Seq || string(got.Body) != string(first.Body) {
		t.Fatalf("Next(%d) = %d %q, %v; want the offered record", first.Seq, got.Seq, got.Body, err)
	}

	second, third := appendTold(log, rec("a", 2)), appendTold(log, rec("b", 3))
	c.Offer(third) // out of turn: the second is not in yet
	c.Offer(first) // again
	if st := c.Stats(); st.Last != first.Seq || st.Records != 1 {
		t.Fatalf("after offers out of turn and again: Last %d, %d records; want %d and 1", st.Last, st.Records, first.Seq)
	}
	c.Offer(second)
	c.Offer(third)
	if st := c.Stats(); st.Last != third.Seq || st.Records != 3 {
		t.Fatalf("after offering the rest in turn: Last %d, %d records; want %d and 3", st.Last, st.Records, third.Seq)
	}
	if log.nexts.Load() != nexts {
		t.Fatalf("the cache read the log %d times for offered records", log.nexts.Load()-nexts)
	}
}
