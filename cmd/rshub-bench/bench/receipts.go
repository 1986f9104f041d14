package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// receipts records the deliveries of one measurement: which receiver got
// which notification and how long after its publish was sent. It is
// complete when every receiver has every notification of [base, base+n).
type receipts struct {
	receivers, base, n int

	mu  sync.Mutex
	got []bool // receiver*n + (id-base)
	lat []time.Duration
	// first and last are each notification's earliest and latest receipt
	// after its publish (id-base), 0 until one came
	first, last []time.Duration
	count       int // distinct (receiver, notification) receipts
	dups        int
	// newest is each receiver's latest notification received (id-base),
	// -1 before its first; reordered counts the distinct receipts of an
	// older notification than that
	newest    []int
	reordered int
	stray     int       // receipts of ids outside the measurement or unknown receivers
	end       time.Time // the latest receipt of all
	done      chan struct{}
}

func newReceipts(receivers, base, n int) *receipts {
	newest := make([]int, receivers)
	for i := range newest {
		newest[i] = -1
	}
	return &receipts{
		receivers: receivers, base: base, n: n, newest: newest,
		got:   make([]bool, receivers*n),
		lat:   make([]time.Duration, 0, receivers*n),
		first: make([]time.Duration, n),
		last:  make([]time.Duration, n),
		done:  make(chan struct{}),
	}
}

// want is the number of receipts that completes the measurement.
func (r *receipts) want() int { return r.receivers * r.n }

// record notes that receiver got notification id, sent at sent, at now.
func (r *receipts) record(receiver, id int, sent, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := id - r.base
	if receiver < 0 || receiver >= r.receivers || k < 0 || k >= r.n {
		r.stray++
		return
	}
	i := receiver*r.n + k
	if r.got[i] {
		r.dups++
		return
	}
	r.got[i] = true
	if k < r.newest[receiver] {
		r.reordered++
	}
	r.newest[receiver] = max(r.newest[receiver], k)
	d := now.Sub(sent)
	r.lat = append(r.lat, d)
	if f := r.first[k]; f == 0 || d < f {
		r.first[k] = d
	}
	r.last[k] = max(r.last[k], d)
	r.count++
	if now.After(r.end) {
		r.end = now
	}
	if r.count == r.want() {
		close(r.done)
	}
}

// wait blocks until every receipt arrived, limit passed or ctx ended; it
// returns errIncomplete (wrapped with the count) when receipts are missing.
func (r *receipts) wait(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("%d of %d receipts: %w", r.count, r.want(), errIncomplete)
	}
}

// tally is what a measurement's receipts add up to.
type tally struct {
	Count int // distinct receipts
	Want  int // receipts expected
	Dups  int // repeated receipts (at-least-once redeliveries)
	// Reordered counts receipts of a notification older than one the
	// receiver already had
	Reordered int
	Stray     int       // receipts outside the measurement
	Last      time.Time // when the last distinct receipt arrived
	Latency   Latencies // publish→receipt over distinct receipts
	// First is publish→first receipt over the notifications any
	// receiver got: how long a fan-out takes to start; Spread is first
	// receipt→last receipt over the same: how long it takes once started
	First, Spread Latencies
}

// misfits counts the receipts a hub must not make: repeats, receipts of
// a notification older than one the receiver had, and strays (a
// notification of an earlier measurement, an unknown receiver). The
// receipts still missing fail the measurement before (receipts.wait).
func (t tally) misfits() int { return t.Dups + t.Reordered + t.Stray }

func (r *receipts) tally() tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := make([]time.Duration, 0, len(r.first))
	spread := make([]time.Duration, 0, len(r.first))
	for k, d := range r.first {
		if d != 0 {
			first = append(first, d)
			spread = append(spread, r.last[k]-d)
		}
	}
	return tally{Count: r.count, Want: r.want(), Dups: r.dups, Reordered: r.reordered, Stray: r.stray, Last: r.end,
		Latency: Summarize(append([]time.Duration(nil), r.lat...)), First: Summarize(first), Spread: Summarize(spread)}
}

// schedule calls send for k = 0..n-1, at start+k*interval when interval is
// positive, back to back otherwise; it stops at the first error or when ctx
// ends.
func schedule(ctx context.Context, n int, interval time.Duration, send func(k int) error) error {
	start := time.Now()
	for k := range n {
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(k) * interval)); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := send(k); err != nil {
			return err
		}
	}
	return nil
}
