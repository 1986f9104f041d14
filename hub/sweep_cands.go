package hub

import (
	"slices"
	"time"
)

// sweepCands is how many of a shard's next lease events the sweep keeps
// (sweptShard.cands). When one is due the sweep reads that subscription
// alone; it lists the shard again only once all it kept are done, so a
// shard of thousands of subscriptions whose leases end one after another
// is listed once per sweepCands lease events, not at each.
const sweepCands = 64

// sweepCand is a subscription and when it next needs the sweep.
type sweepCand struct {
	at time.Time
	id string
}

// sweptShard is what the periodic sweep knows of a shard since it last
// read it: the store's version of the shard then, and its subscriptions
// with an event (a lease ending, an expired one to forget) before
// horizon, earliest first: every one of them when horizon is zero.
type sweptShard struct {
	read    bool
	ver     uint64
	cands   []sweepCand
	horizon time.Time
}

// due returns when the shard next needs the sweep (zero: never).
func (s *sweptShard) due() time.Time {
	if len(s.cands) > 0 {
		return s.cands[0].at
	}
	return s.horizon
}

// stale reports whether the shard must be listed at now: it was read, it
// has nothing left that it kept, and events it did not keep may be due.
func (s *sweptShard) stale(now time.Time) bool {
	return s.read && len(s.cands) == 0 && !s.horizon.IsZero() && !now.Before(s.horizon)
}

// takeDue removes and returns the kept subscriptions due at now.
func (s *sweptShard) takeDue(now time.Time) []sweepCand {
	i := 0
	for i < len(s.cands) && !now.Before(s.cands[i].at) {
		i++
	}
	due := slices.Clone(s.cands[:i])
	s.cands = slices.Delete(s.cands, 0, i)
	return due
}

// listed notes the events of a whole listing of the shard, read under
// version ver; evs is reordered.
func (s *sweptShard) listed(ver uint64, evs []sweepCand) {
	slices.SortFunc(evs, func(a, b sweepCand) int { return a.at.Compare(b.at) })
	s.read, s.ver, s.horizon = true, ver, time.Time{}
	if len(evs) > sweepCands {
		s.horizon = evs[sweepCands].at
		evs = evs[:sweepCands]
	}
	s.cands = slices.Clone(evs)
}

// note records that id next needs the sweep at at (zero: never).
func (s *sweptShard) note(id string, at time.Time) {
	if i := slices.IndexFunc(s.cands, func(c sweepCand) bool { return c.id == id }); i >= 0 {
		s.cands = slices.Delete(s.cands, i, i+1)
	}
	if at.IsZero() || (!s.horizon.IsZero() && !at.Before(s.horizon)) {
		return // the listing that reaches the horizon finds it
	}
	i, _ := slices.BinarySearchFunc(s.cands, at, func(c sweepCand, t time.Time) int { return c.at.Compare(t) })
	s.cands = slices.Insert(s.cands, i, sweepCand{at: at, id: id})
	if len(s.cands) > sweepCands { // keep the earliest; the horizon comes closer
		s.horizon = s.cands[sweepCands].at
		s.cands = s.cands[:sweepCands]
	}
}

// events returns the next event of each of subs, leaving out those with
// none.
func events(subs []Subscription) []sweepCand {
	evs := make([]sweepCand, 0, len(subs))
	for _, s := range subs {
		if at := nextEvent(s); !at.IsZero() {
			evs = append(evs, sweepCand{at: at, id: s.ID})
		}
	}
	return evs
}
