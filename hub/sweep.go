package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rshub/rshub/wire"
)

// expiredKept is how long an expired subscription stays in the store
// before the sweep forgets it.
const expiredKept = 24 * time.Hour

// shardHolder is an Activator that holds part of the subscription space,
// as the webhook engine of hubs sharing a store does (a shard at a time,
// see Shards): the lease sweep then covers only its shards, so the hubs
// split the sweep as they split delivery.
type shardHolder interface {
	// Shards returns the shards held now.
	Shards() []int
}

// listingHolder is a shardHolder that lists the shards it holds and keeps
// up with their changes itself (the webhook engine): it hands the sweep
// every listing it takes and every change it follows, so that the sweep
// reads a shard only when one of its leases is due.
type listingHolder interface {
	shardHolder
	// HandListings has the holder tell to every listing and change from
	// now on.
	HandListings(to ShardNotes)
}

// ShardNotes takes what a shard holder read of its shards (listingHolder).
type ShardNotes interface {
	// ShardListed notes subs, the whole of shard n as listed under the
	// shard's version ver, read before the listing.
	ShardListed(n int, ver uint64, subs []Subscription)
	// SubscriptionsChanged notes changes followed since the listings.
	SubscriptionsChanged(changes []SubscriptionChange)
}

// sweepState is what the lease sweep knows of the shards, and its mark in
// the store's SubscriptionFeed ("": none). A listingHolder's notes arrive
// on its own goroutine.
type sweepState struct {
	mu     sync.Mutex
	shards [Shards]sweptShard
	mark   string
	handed bool // a listingHolder tells every listing and change
}

// ShardListed implements ShardNotes.
func (st *sweepState) ShardListed(n int, ver uint64, subs []Subscription) {
	evs := events(subs)
	st.mu.Lock()
	st.shards[n].listed(ver, evs)
	st.mu.Unlock()
}

// SubscriptionsChanged implements ShardNotes. A deletion needs no note: a
// kept subscription found gone when due is dropped.
func (st *sweepState) SubscriptionsChanged(changes []SubscriptionChange) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, c := range changes {
		if s := &st.shards[c.Shard]; s.read && !c.Deleted {
			s.note(c.Sub.ID, nextEvent(c.Sub))
		}
	}
}

// nextEvent returns when s will need the sweep: the end of its lease, or
// when an expired one is forgotten (zero: never).
func nextEvent(s Subscription) time.Time {
	switch {
	case s.Expires.IsZero():
		return time.Time{}
	case s.State == SubActive:
		return s.Expires
	case s.State == SubExpired:
		return s.Expires.Add(expiredKept)
	}
	return time.Time{}
}

// newSweepState returns the sweep's state, handed the listings of act when
// it is a listingHolder.
func newSweepState(act Activator) *sweepState {
	st := &sweepState{}
	if lh, ok := act.(listingHolder); ok {
		st.handed = true
		lh.HandListings(st)
	}
	return st
}

// sweepLeases marks subscriptions whose lease ended as expired and stops
// their delivery; expired subscriptions are forgotten a day later. Every
// interval it re-reads only the shards that hold a lease due or whose
// subscriptions changed when it cannot follow the changes, so an idle
// hub's sweep costs a read or two whatever the number of subscriptions.
func (h *Hub) sweepLeases(ctx context.Context) {
	t := time.NewTicker(h.sweepEvery())
	defer t.Stop()
	for {
		if err := h.sweepDue(ctx, h.sweep); err != nil && ctx.Err() == nil {
			h.logger.Error("lease sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (h *Hub) sweepEvery() time.Duration {
	d := time.Duration(h.cfg.Leases.Min) * time.Second / 10
	return min(max(d, time.Second), 30*time.Second)
}

// sweepDue sweeps the shards that need it and notes them again in st: a
// shard not read yet (but one a listingHolder will hand over), one whose
// next lease event is due, and, when the sweep keeps up with the store by
// itself, one whose subscriptions changed: those the store's feed tells
// (SubscriptionFeed) are noted without a listing; without a feed, or when
// it lost track, a shard whose version moved is listed again.
func (h *Hub) sweepDue(ctx context.Context, st *sweepState) error {
	var vers []uint64
	if !st.handed {
		var err error
		if vers, err = h.sweepFollow(ctx, st); err != nil {
			return err
		}
	}
	now := h.cfg.Now()
	var shards []int
	due := map[int][]sweepCand{}
	st.mu.Lock()
	for _, n := range h.sweepShards() {
		s := &st.shards[n]
		switch {
		case (!s.read && !st.handed) || (vers != nil && s.ver != vers[n]) || s.stale(now):
			shards = append(shards, n)
		case s.read:
			if d := s.takeDue(now); len(d) > 0 {
				due[n] = d
			}
		}
	}
	st.mu.Unlock()
	for n, cands := range due {
		h.sweepKept(ctx, st, n, cands)
	}
	return ListShards(ctx, h.cfg.Store, shards, func(n int, subs []Subscription) error {
		evs := h.sweepListed(ctx, subs)
		st.mu.Lock()
		s := &st.shards[n]
		ver := s.ver
		if vers != nil {
			ver = vers[n]
		}
		s.listed(ver, evs)
		st.mu.Unlock()
		return nil
	})
}

// sweepKept sweeps the subscriptions of shard n it kept that are due,
// each read again by itself, and keeps each for its next event.
func (h *Hub) sweepKept(ctx context.Context, st *sweepState, n int, cands []sweepCand) {
	now := h.cfg.Now()
	for _, c := range cands {
		next := now // a read that fails is tried again at the next pass
		sub, err := h.cfg.Store.Subscription(ctx, c.id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // deleted
		case err == nil:
			next = h.sweepOne(ctx, sub, now, true)
		}
		st.mu.Lock()
		st.shards[n].note(c.id, next)
		st.mu.Unlock()
	}
}

// sweepFollow notes in st the changes since its mark when the store tells
// them, else returns the shard versions to compare (taking a new mark
// first when the store has a feed).
func (h *Hub) sweepFollow(ctx context.Context, st *sweepState) (vers []uint64, err error) {
	feed, ok := h.cfg.Store.(SubscriptionFeed)
	if ok && st.mark != "" {
		changes, next, err := feed.SubscriptionChanges(ctx, st.mark, MaxFollowed)
		switch {
		case err == nil:
			st.SubscriptionsChanged(changes)
			st.mark = next
			return nil, nil
		case !errors.Is(err, ErrFeedLost):
			return nil, fmt.Errorf("subscription changes: %w", err)
		}
		h.logger.Info("lease sweep: subscription changes lost; listing the shards that moved", "err", err)
		st.mark = ""
	}
	if ok {
		if st.mark, err = feed.SubscriptionMark(ctx); err != nil && !errors.Is(err, ErrFeedLost) {
			return nil, fmt.Errorf("subscription mark: %w", err)
		}
	}
	if vers, err = h.cfg.Store.ShardVersions(ctx); err != nil {
		return nil, fmt.Errorf("shard versions: %w", err)
	}
	if len(vers) != Shards {
		return nil, fmt.Errorf("shard versions: %d, want %d", len(vers), Shards)
	}
	return vers, nil
}

// sweepShards returns the shards this hub sweeps.
func (h *Hub) sweepShards() []int {
	if sh, ok := h.cfg.Activator.(shardHolder); ok {
		return sh.Shards()
	}
	shards := make([]int, Shards)
	for n := range shards {
		shards[n] = n
	}
	return shards
}

// sweepShard expires the subscriptions of shard n whose lease has ended,
// forgets those expired for a day, and returns the next event of each.
func (h *Hub) sweepShard(ctx context.Context, n int) ([]sweepCand, error) {
	subs, err := h.cfg.Store.SubscriptionsInShard(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("shard %d: %w", n, err)
	}
	return h.sweepListed(ctx, subs), nil
}

// sweepListed sweeps subs, a listing of one shard (see sweepShard), and
// returns the next event of each.
func (h *Hub) sweepListed(ctx context.Context, subs []Subscription) []sweepCand {
	now := h.cfg.Now()
	evs := make([]sweepCand, 0, len(subs))
	for _, s := range subs {
		if at := h.sweepOne(ctx, s, now, false); !at.IsZero() {
			evs = append(evs, sweepCand{at: at, id: s.ID})
		}
	}
	return evs
}

// sweepOne expires s when its lease has ended, forgets it when it expired
// a day ago, and returns when it next needs the sweep (now: try again;
// zero: never). fresh says s was just read by itself; a subscription from
// a listing is read again before it is expired.
func (h *Hub) sweepOne(ctx context.Context, s Subscription, now time.Time, fresh bool) time.Time {
	switch {
	case s.State == SubActive && now.After(s.Expires):
		unlock, err := h.lockSub(ctx, s.ID)
		if err != nil {
			return now
		}
		defer unlock()
		if !fresh { // a renewal verified since the listing must win
			cur, err := h.cfg.Store.Subscription(ctx, s.ID)
			if errors.Is(err, ErrNotFound) {
				return time.Time{}
			}
			if err != nil {
				return now
			}
			if cur.State != SubActive || !now.After(cur.Expires) {
				return nextEvent(cur) // renewed or expired since
			}
			s = cur
		}
		s.State = SubExpired
		if err := h.cfg.Store.PutSubscription(ctx, s); err != nil {
			h.logger.Error("lease sweep: expire", "id", s.ID, "err", err)
			return now
		}
		if h.cfg.Activator != nil {
			h.cfg.Activator.Deactivate(s.ID)
		}
		h.logger.Info("lease ended", "topic", wire.Clip(s.Topic), "callback", wire.Clip(s.Callback))
		return s.Expires.Add(expiredKept)
	case s.State == SubExpired && now.After(s.Expires.Add(expiredKept)):
		if err := h.cfg.Store.DeleteSubscription(ctx, s.ID); err != nil {
			h.logger.Error("lease sweep: forget", "id", s.ID, "err", err)
			return now
		}
		return time.Time{}
	}
	return nextEvent(s)
}
