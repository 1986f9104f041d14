package hub

import (
	"strconv"
	"testing"
	"time"
)

// A subscription delivering steadily reuses the array of its held
// records from one flush to the next: recording costs no allocation once
// its first flush is past. One that recorded nothing for a hold after a
// flush is dropped, and a flush with hold < 0 (Flush, a stop) drops all.
func TestAttemptLog_SteadySubscriptionReusesItsRecords(t *testing.T) {
	const hold = time.Second
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold})
	a := Attempt{SubID: "sub", Seq: 1, Attempt: 1, Status: 204}
	for range 20 {
		l.Record(a)
	}
	if got := len(l.take(time.Now().Add(hold), hold)); got != 20 {
		t.Fatalf("first flush took %d records, want 20", got)
	}
	if n := testing.AllocsPerRun(1, func() { l.Record(a) }); n != 0 {
		t.Fatalf("%v allocations per record after a flush, want 0: the array is reused", n)
	}
	if got := len(l.take(time.Now().Add(hold), hold)); got != 2 {
		t.Fatalf("second flush took %d records, want 2 (AllocsPerRun records twice)", got)
	}
	if got := len(l.take(time.Now().Add(2*hold), hold)); got != 0 || l.pendingSubs() != 0 {
		t.Fatalf("a flush after a silent hold took %d records and kept %d subscriptions, want none", got, l.pendingSubs())
	}
	l.Record(a)
	l.take(time.Now().Add(hold), hold)
	if l.take(time.Now(), -1); l.pendingSubs() != 0 {
		t.Fatalf("Flush kept %d subscriptions", l.pendingSubs())
	}
}

// pendingSubs counts the subscriptions held.
func (l *AttemptLog) pendingSubs() int {
	n := 0
	for i := range l.shards {
		l.shards[i].mu.Lock()
		n += len(l.shards[i].pending)
		l.shards[i].mu.Unlock()
	}
	return n
}

// A subscription's own recorder (For) records what Record would, and goes
// on recording once a flush dropped its held records (a silent hold) and
// once Flush dropped every subscription: nothing it records is lost.
func TestAttemptLog_SubscriptionRecorderSurvivesItsRecordsDropped(t *testing.T) {
	const hold = time.Second
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold})
	r := l.For("sub")
	a := Attempt{SubID: "sub", Seq: 1, Attempt: 1, Status: 204}
	r.Record(a)
	l.Record(Attempt{SubID: "sub", Seq: 2, Attempt: 1, Status: 204})
	if got := l.take(time.Now().Add(hold), hold); len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Fatalf("first flush took %+v, want seqs 1 and 2 in order", got)
	}
	l.take(time.Now().Add(3*hold), hold) // silent for a hold: dropped
	if l.pendingSubs() != 0 {
		t.Fatal("a subscription silent for a hold was kept")
	}
	a.Seq = 3
	r.Record(a)
	if got := l.take(time.Now().Add(hold), hold); len(got) != 1 || got[0].Seq != 3 {
		t.Fatalf("after its records were dropped, the recorder's record was not taken: %+v", got)
	}
	r.Record(a)
	if got := l.take(time.Now(), -1); len(got) != 1 || l.pendingSubs() != 0 {
		t.Fatalf("Flush took %d records and kept %d subscriptions, want 1 and none", len(got), l.pendingSubs())
	}
	a.Seq = 4
	r.Record(a)
	if got := l.take(time.Now(), -1); len(got) != 1 || got[0].Seq != 4 {
		t.Fatalf("after Flush, the recorder's record was not taken: %+v", got)
	}
}

// BenchmarkAttemptLog_Steady is the attempt log of a 1 -> 10,000 fan-out:
// per op, one first attempt that delivered for each of 10,000
// subscriptions, then a flush a second later (each subscription written
// once per 5 s hold); "own" records through each subscription's recorder
// (For), as a delivery queue does.
func BenchmarkAttemptLog_Steady(b *testing.B) {
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = SubscriptionID("https://example.org/t", "https://cb.example/"+strconv.Itoa(i))
	}
	for _, own := range []bool{false, true} {
		b.Run(map[bool]string{false: "log", true: "own"}[own], func(b *testing.B) {
			l := NewAttemptLog(nil, AttemptLogConfig{Hold: 5 * time.Second})
			rs := make([]*SubAttempts, len(ids))
			for i, id := range ids {
				rs[i] = l.For(id)
			}
			now := time.Now().UTC() // as the delivery engine records it
			b.ReportAllocs()
			for b.Loop() {
				for i, id := range ids {
					a := Attempt{SubID: id, Seq: 1, Attempt: 1, Status: 204, Time: now}
					if own {
						rs[i].Record(a)
					} else {
						l.Record(a)
					}
				}
				now = now.Add(time.Second)
				l.take(now, 5*time.Second)
			}
		})
	}
}

// A flush takes what is due without losing what is not: with thousands
// of healthy subscriptions held and not due, it takes only the one whose
// record failed, then each healthy one once its hold is over, oldest
// first. The order it keeps stays bounded however the subscriptions record
// (refilled after each flush, or dropped at MaxPending).
func TestAttemptLog_FlushTakesOnlyWhatIsDue(t *testing.T) {
	const hold, subs = time.Second, 5000
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: hold, MaxPending: 4 * subs})
	id := func(i int) string { return "sub-" + strconv.Itoa(i) }
	t0 := time.Now()
	for i := range subs {
		l.Record(Attempt{SubID: id(i), Seq: 1, Attempt: 1, Status: 204})
	}
	l.Record(Attempt{SubID: id(7), Seq: 2, Attempt: 1, Status: 503, Error: "callback answered 503"})
	got := l.take(t0, hold)
	if len(got) != 2 || got[0].SubID != id(7) || got[1].Seq != 2 {
		t.Fatalf("a flush before the hold took %d records (%+v), want the failing subscription's 2", len(got), got)
	}
	if got := l.take(t0.Add(hold/2), hold); len(got) != 0 {
		t.Fatalf("a flush half a hold in took %d records, want none", len(got))
	}
	got = l.take(time.Now().Add(hold), hold)
	if len(got) != subs-1 {
		t.Fatalf("a flush after the hold took %d records, want %d", len(got), subs-1)
	}
	for round := range 50 {
		for i := range subs {
			l.Record(Attempt{SubID: id(i), Seq: uint64(round + 3), Attempt: 1, Status: 204})
		}
		l.take(time.Now().Add(hold), hold)
	}
	if n := l.ordered(); n > 4*subs {
		t.Fatalf("after 50 rounds of every subscription refilled, %d entries are in order, want at most %d", n, 4*subs)
	}

	full := NewAttemptLog(nil, AttemptLogConfig{Hold: hold, MaxPending: 1})
	full.Record(Attempt{SubID: id(0), Seq: 1, Attempt: 1, Status: 204})
	for range 1000 {
		full.Record(Attempt{SubID: id(1), Seq: 1, Attempt: 1, Status: 204}) // dropped: MaxPending held
	}
	if n := full.ordered(); n > 4 {
		t.Fatalf("1,000 records dropped at MaxPending left %d entries in order, want at most 4", n)
	}
	if _, dropped := full.Stats(); dropped != 1000 {
		t.Fatalf("%d records counted dropped, want 1000", dropped)
	}
	// The subscription whose every record was dropped is forgotten a hold
	// later, at a flush out of pressure (the held record written).
	full.take(time.Now().Add(hold), hold)
	full.take(time.Now().Add(3*hold), hold)
	if n := full.pendingSubs(); n != 0 {
		t.Fatalf("%d subscriptions kept after a flush two holds on, want none", n)
	}
}

// ordered counts the entries of the shards' order of holds.
func (l *AttemptLog) ordered() int {
	n := 0
	for i := range l.shards {
		l.shards[i].mu.Lock()
		n += len(l.shards[i].byAge) - l.shards[i].head
		l.shards[i].mu.Unlock()
	}
	return n
}

// BenchmarkAttemptLog_FlushManyHeld is one flush of a hub holding the
// records of 100,000 subscriptions that delivered once, none due yet (a
// publish to every channel of a big hub, within its hold): a flush looks
// at none of them.
func BenchmarkAttemptLog_FlushManyHeld(b *testing.B) {
	l := NewAttemptLog(nil, AttemptLogConfig{Hold: time.Hour, MaxPending: 1 << 20})
	for i := range 100000 {
		l.Record(Attempt{SubID: "sub-" + strconv.Itoa(i), Seq: 1, Attempt: 1, Status: 204})
	}
	now := time.Now()
	for b.Loop() {
		if got := l.take(now, time.Hour); len(got) != 0 {
			b.Fatal(len(got))
		}
	}
}
