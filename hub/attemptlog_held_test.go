package hub

import (
	"reflect"
	"strconv"
	"testing"
	"time"
	"unsafe"
)

// A flush gives back every record as it was recorded, in order, whether
// it was held compact (a first attempt that delivered, its time in UTC)
// or in full: a failed attempt, a retry, one with response headers or a
// time in another zone. Once one is held in full, so are the records
// after it until the next write; after it, compact again.
func TestAttemptLog_TakesBackWhatWasRecorded(t *testing.T) {
	if size := unsafe.Sizeof(heldRecord{}); size != 32 {
		t.Fatalf("a compact record is %d bytes, want 32", size)
	}
	const hold = time.Second
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold})
	at := time.Date(2026, 11, 27, 1, 2, 3, 456789012, time.UTC)
	paris := time.FixedZone("CET", 3600)
	ok := func(seq uint64) Attempt {
		return Attempt{SubID: "sub", Time: at.Add(time.Duration(seq) * time.Millisecond), Seq: seq, Attempt: 1, Status: 204, LatencyMS: 1.25}
	}
	rounds := [][]Attempt{
		{ok(1), ok(2), {SubID: "sub", Seq: 3, Attempt: 1, Status: 200}}, // all compact, one at the zero time
		{ok(4), {SubID: "sub", Time: at, Seq: 5, Attempt: 1, Status: 503, Error: "callback answered 503",
			Headers: map[string]string{"Retry-After": "1"}, Body: "busy", NextRetry: at.Add(time.Second)}, ok(6)},
		{ok(7), {SubID: "sub", Time: at, Seq: 7, Attempt: 2, Status: 204}, ok(8)},
		{ok(9), {SubID: "sub", Time: at.In(paris), Seq: 10, Attempt: 1, Status: 204}},
		{ok(11), ok(12)}, // compact again
	}
	for i, want := range rounds {
		for _, a := range want {
			l.Record(a)
		}
		got := l.take(time.Now().Add(time.Duration(i+1)*hold), hold)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: took\n%+v\nwant\n%+v", i, got, want)
		}
		for j := range got {
			if !got[j].Time.Equal(want[j].Time) || got[j].Time.Location().String() != want[j].Time.Location().String() {
				t.Fatalf("round %d, record %d: time %v, want %v", i, j, got[j].Time, want[j].Time)
			}
		}
	}
	if held := l.held.Load(); held != 0 {
		t.Fatalf("%d records counted held after every flush, want 0", held)
	}
}

// A subscription keeps its newest AttemptLogLen to twice that records
// between writes, compact or in full, and a flush writes the newest
// AttemptLogLen.
func TestAttemptLog_KeepsTheNewestRecords(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(map[bool]string{false: "compact", true: "full"}[failing], func(t *testing.T) {
			const hold = time.Second
			l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold})
			const n = 3*AttemptLogLen + 7
			for seq := range uint64(n) {
				a := Attempt{SubID: "sub", Seq: seq + 1, Attempt: 1, Status: 204}
				if failing && seq == 0 {
					a.Status, a.Error = 500, "callback answered 500"
				}
				l.Record(a)
			}
			if held := l.held.Load(); held < AttemptLogLen || held > 2*AttemptLogLen {
				t.Fatalf("%d records held, want %d to %d", held, AttemptLogLen, 2*AttemptLogLen)
			}
			got := l.take(time.Now().Add(hold), hold)
			if len(got) != AttemptLogLen || got[0].Seq != n-AttemptLogLen+1 || got[len(got)-1].Seq != n {
				t.Fatalf("took %d records, seqs %d..%d; want the newest %d, %d..%d",
					len(got), got[0].Seq, got[len(got)-1].Seq, AttemptLogLen, n-AttemptLogLen+1, n)
			}
			if held := l.held.Load(); held != 0 {
				t.Fatalf("%d records counted held after the flush, want 0", held)
			}
		})
	}
}

// A big hub holds its healthy subscriptions longer, so that it writes
// about attemptPutRate of them a second: Hold up to attemptPutRate times
// Hold subscriptions held, then one second per attemptPutRate of them, up
// to attemptHoldMax. A negative Hold still writes everything every flush.
func TestAttemptLog_HoldGrowsWithTheSubscriptionsHeld(t *testing.T) {
	const hold = 5 * time.Second
	for _, c := range []struct {
		subs int
		want time.Duration
	}{
		{0, hold},
		{attemptPutRate * 5, hold},
		{attemptPutRate * 8, 8 * time.Second},
		{attemptPutRate * 100, attemptHoldMax},
	} {
		l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold})
		for i := range c.subs {
			l.Record(Attempt{SubID: "sub-" + strconv.Itoa(i), Seq: 1, Attempt: 1, Status: 204})
		}
		if got := l.hold(); got != c.want {
			t.Errorf("%d subscriptions held: hold %v, want %v", c.subs, got, c.want)
		}
	}
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: -1})
	l.Record(Attempt{SubID: "sub", Seq: 1, Attempt: 1, Status: 204})
	if got := l.hold(); got != 0 {
		t.Errorf("Hold < 0: hold %v, want 0", got)
	}
}
