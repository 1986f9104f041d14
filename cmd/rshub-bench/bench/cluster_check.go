package bench

import (
	"fmt"
	"time"
)

// clusterCheck is what the receipts of a whole cluster life add up to.
type clusterCheck struct {
	Subs      int // subscriptions checked
	Complete  int // subscriptions that got every acknowledged notification of their channel, in order
	Missing   int // acknowledged (subscription, notification) pairs never received
	Unordered int // subscriptions whose first receipts were not in publish order
	Stray     int // receipts of a notification of another channel
}

// checkDelivery checks every subscription in [0, subs): each acknowledged
// notification of its channel (subscription i is on channel i % chans)
// from id firstID(i) on received, first receipts in publish order (ids grow with publish order
// within a channel), nothing of another channel. A notification id may
// arrive again (at-least-once); only its first arrival counts for order.
func checkDelivery(l *clusterLog, pubs []clusterPub, chans, subs int, firstID func(i int) int32) clusterCheck {
	acked := make([][]int32, chans) // acknowledged ids by channel
	for id, p := range pubs {
		if p.acked {
			acked[p.ch] = append(acked[p.ch], int32(id))
		}
	}
	c := clusterCheck{Subs: subs}
	l.each(0, subs, func(i int, rs []clusterReceipt) {
		ch := i % chans
		seen := map[int32]bool{}
		ordered, last := true, int32(-1)
		for _, r := range rs {
			if int(r.id) >= len(pubs) || pubs[r.id].ch != ch {
				c.Stray++
				continue
			}
			if seen[r.id] {
				continue
			}
			seen[r.id] = true
			if r.id < last {
				ordered = false
			}
			last = r.id
		}
		missing := 0
		for _, id := range acked[ch] {
			if id >= firstID(i) && !seen[id] {
				missing++
			}
		}
		c.Missing += missing
		if !ordered {
			c.Unordered++
		}
		if ordered && missing == 0 {
			c.Complete++
		}
	})
	return c
}

// err reports a check that failed.
func (c clusterCheck) err() error {
	if c.Missing == 0 && c.Unordered == 0 && c.Stray == 0 {
		return nil
	}
	return fmt.Errorf("cluster: %d acknowledged deliveries missing, %d subscriptions out of order, %d stray receipts", c.Missing, c.Unordered, c.Stray)
}

// phaseCounts are the receipts that arrived in a time window.
type phaseCounts struct {
	Receipts int // POSTs received
	Dups     int // of those, repeats of a notification the subscription already had
	// MovedDups are the Dups at subscriptions the moved set names.
	MovedDups int
}

// countPhase counts the receipts of subscriptions [0, subs) that arrived
// in [from, to), offsets from the log's epoch; moved (nil: none) names
// the subscriptions whose owner changed in the window.
func countPhase(l *clusterLog, subs int, from, to time.Duration, moved func(i int) bool) phaseCounts {
	var pc phaseCounts
	l.each(0, subs, func(i int, rs []clusterReceipt) {
		seen := map[int32]bool{}
		for _, r := range rs {
			dup := seen[r.id]
			seen[r.id] = true
			if r.at < int64(from) || r.at >= int64(to) {
				continue
			}
			pc.Receipts++
			if dup {
				pc.Dups++
				if moved != nil && moved(i) {
					pc.MovedDups++
				}
			}
		}
	})
	return pc
}

// receiptSpread is the first and last arrival of notification round (by
// channel) at the subscriptions in set, after t0 (offsets from the log's
// epoch), and how many of them got it.
type receiptSpread struct {
	N           int
	First, Last time.Duration // after t0
	P50         time.Duration
}

func spreadOf(l *clusterLog, subs int, round []int, set func(i int) bool, t0 time.Duration) receiptSpread {
	var lat []time.Duration
	l.each(0, subs, func(i int, rs []clusterReceipt) {
		if !set(i) {
			return
		}
		id := int32(round[i%len(round)])
		for _, r := range rs {
			if r.id == id {
				lat = append(lat, time.Duration(r.at)-t0)
				return
			}
		}
	})
	s := Summarize(lat) // sorts lat
	if s.Count == 0 {
		return receiptSpread{}
	}
	return receiptSpread{N: s.Count, First: lat[0], Last: s.Max, P50: s.P50}
}
