package hub

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSweptShard_KeepsEveryEventBeforeItsHorizon checks what the sweep's
// memory of a shard promises, against every subscription's true next
// event, through random listings, changes and due passes: each
// subscription whose event comes before the horizon (any, when there is
// none) is kept once with that event, earliest first, at most sweepCands
// of them; a pass takes exactly those due.
func TestSweptShard_KeepsEveryEventBeforeItsHorizon(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time {
		if rng.IntN(10) == 0 {
			return time.Time{} // no event
		}
		return t0.Add(time.Duration(rng.IntN(1000)) * time.Minute)
	}
	for round := range 50 {
		truth := map[string]time.Time{}
		var s sweptShard
		list := func() {
			var evs []sweepCand
			for id, a := range truth {
				if !a.IsZero() {
					evs = append(evs, sweepCand{at: a, id: id})
				}
			}
			s.listed(7, evs)
		}
		for i := range rng.IntN(300) {
			truth[fmt.Sprint("s", i)] = at()
		}
		list()
		now := t0
		for step := range 400 {
			switch op := rng.IntN(10); {
			case op < 6: // a subscription written
				id := fmt.Sprint("s", rng.IntN(350))
				truth[id] = at()
				s.note(id, truth[id])
			case op < 9: // time passes; what is due is swept
				now = now.Add(time.Duration(rng.IntN(30)) * time.Minute)
				for _, c := range s.takeDue(now) {
					if c.at.After(now) || !truth[c.id].Equal(c.at) {
						t.Fatalf("round %d step %d: took %v due at %v, its event is %v", round, step, c, now, truth[c.id])
					}
					truth[c.id] = time.Time{} // swept: nothing more to do
					s.note(c.id, time.Time{})
				}
				if s.stale(now) {
					list()
				}
			default:
				list()
			}
			if len(s.cands) > sweepCands {
				t.Fatalf("round %d step %d: %d kept, at most %d", round, step, len(s.cands), sweepCands)
			}
			kept := map[string]bool{}
			for i, c := range s.cands {
				if kept[c.id] {
					t.Fatalf("round %d step %d: %s kept twice", round, step, c.id)
				}
				kept[c.id] = true
				if i > 0 && c.at.Before(s.cands[i-1].at) {
					t.Fatalf("round %d step %d: kept out of order", round, step)
				}
				if !truth[c.id].Equal(c.at) {
					t.Fatalf("round %d step %d: %s kept at %v, its event is %v", round, step, c.id, c.at, truth[c.id])
				}
			}
			for id, a := range truth {
				if !a.IsZero() && (s.horizon.IsZero() || a.Before(s.horizon)) && !kept[id] {
					t.Fatalf("round %d step %d: %s (event %v) before the horizon %v but not kept", round, step, id, a, s.horizon)
				}
			}
			if d := s.due(); len(s.cands) == 0 && !d.Equal(s.horizon) {
				t.Fatalf("round %d step %d: nothing kept, due %v, horizon %v", round, step, d, s.horizon)
			}
		}
	}
}
