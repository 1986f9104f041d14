package bench

import (
	"testing"
	"time"
)

// A measurement's tally counts distinct receipts, duplicates and strays
// apart, its First is each notification's earliest receipt (the fan-out's
// start) and its Spread the time from there to the latest, whatever order
// the receipts came in.
func TestReceipts_TallyCountsAndFirstReceipts(t *testing.T) {
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return sent.Add(time.Duration(ms) * time.Millisecond) }
	rc := newReceipts(3, 10, 2) // 3 receivers, notifications 10 and 11
	rc.record(2, 10, sent, at(9))
	rc.record(0, 10, sent, at(4))
	rc.record(1, 10, sent, at(6))
	rc.record(0, 10, sent, at(1)) // a redelivery: not the first receipt
	rc.record(1, 11, sent, at(30))
	rc.record(0, 11, sent, at(20))
	rc.record(5, 11, sent, at(2)) // no such receiver
	rc.record(0, 12, sent, at(2)) // outside the measurement
	got := rc.tally()
	if got.Count != 5 || got.Want != 6 || got.Dups != 1 || got.Stray != 2 {
		t.Fatalf("count %d want %d dups %d stray %d", got.Count, got.Want, got.Dups, got.Stray)
	}
	if got.First.Count != 2 || got.First.P50 != 4*time.Millisecond || got.First.Max != 20*time.Millisecond {
		t.Fatalf("first receipts = %+v, want 2 of them, 4 ms and 20 ms", got.First)
	}
	// notification 10: 4 → 9 ms; 11: 20 → 30 ms
	if got.Spread.Count != 2 || got.Spread.P50 != 5*time.Millisecond || got.Spread.Max != 10*time.Millisecond {
		t.Fatalf("spreads = %+v, want 5 ms and 10 ms", got.Spread)
	}
	if got.Latency.P50 != 9*time.Millisecond || got.Last != at(30) {
		t.Fatalf("latency p50 %s, last %s", got.Latency.P50, got.Last)
	}
}

// A receiver that gets a notification older than one it already had counts
// as out of order, once per such receipt; each receiver's order is its own.
func TestReceipts_OutOfOrderPerReceiver(t *testing.T) {
	sent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newReceipts(2, 0, 3)
	rc.record(0, 0, sent, sent)
	rc.record(0, 2, sent, sent)
	rc.record(0, 1, sent, sent) // after 2: out of order
	rc.record(1, 1, sent, sent)
	rc.record(1, 2, sent, sent)
	rc.record(1, 0, sent, sent) // after 2: out of order
	rc.record(1, 0, sent, sent) // a repeat, not counted again as out of order
	got := rc.tally()
	if got.Reordered != 2 || got.Dups != 1 || got.misfits() != 3 {
		t.Fatalf("reordered %d dups %d misfits %d, want 2, 1 and 3", got.Reordered, got.Dups, got.misfits())
	}
	in := newReceipts(1, 0, 2)
	in.record(0, 0, sent, sent)
	in.record(0, 1, sent, sent)
	if got := in.tally(); got.misfits() != 0 {
		t.Fatalf("receipts in order: misfits %d, want 0", got.misfits())
	}
}
