package hub

import (
	"context"
	"fmt"
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

// sweptShard is what the periodic sweep knows of a shard since it last
// read it: the store's version of the shard then, and when one of its
// subscriptions next needs the sweep (a lease ending, an expired one to
// forget; zero: none).
type sweptShard struct {
	read bool
	ver  uint64
	due  time.Time
}

// sweepLeases marks subscriptions whose lease ended as expired and stops
// their delivery; expired subscriptions are forgotten a day later. Every
// interval it reads the shard versions and re-reads only the shards that
// changed or hold a lease due, so an idle hub's sweep costs one read
// whatever the number of subscriptions.
func (h *Hub) sweepLeases(ctx context.Context) {
	var swept [Shards]sweptShard
	t := time.NewTicker(h.sweepEvery())
	defer t.Stop()
	for {
		if err := h.sweepDue(ctx, &swept); err != nil && ctx.Err() == nil {
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

// sweepDue sweeps the shards whose version moved or whose next lease event
// is due since swept was noted, and notes them again.
func (h *Hub) sweepDue(ctx context.Context, swept *[Shards]sweptShard) error {
	vers, err := h.cfg.Store.ShardVersions(ctx)
	if err != nil {
		return fmt.Errorf("shard versions: %w", err)
	}
	if len(vers) != Shards {
		return fmt.Errorf("shard versions: %d, want %d", len(vers), Shards)
	}
	now := h.cfg.Now()
	var shards []int
	for _, n := range h.sweepShards() {
		s := &swept[n]
		if !s.read || s.ver != vers[n] || (!s.due.IsZero() && !now.Before(s.due)) {
			shards = append(shards, n)
		}
	}
	return ListShards(ctx, h.cfg.Store, shards, func(n int, subs []Subscription) error {
		swept[n] = sweptShard{read: true, ver: vers[n], due: h.sweepListed(ctx, subs)}
		return nil
	})
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
// forgets those expired for a day, and returns when the next of its
// subscriptions will need the sweep (zero: none).
func (h *Hub) sweepShard(ctx context.Context, n int) (due time.Time, err error) {
	subs, err := h.cfg.Store.SubscriptionsInShard(ctx, n)
	if err != nil {
		return time.Time{}, fmt.Errorf("shard %d: %w", n, err)
	}
	return h.sweepListed(ctx, subs), nil
}

// sweepListed sweeps subs, a listing of one shard (see sweepShard).
func (h *Hub) sweepListed(ctx context.Context, subs []Subscription) (due time.Time) {
	next := func(t time.Time) {
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	now := h.cfg.Now()
	for _, s := range subs {
		switch {
		case s.State == SubActive && now.After(s.Expires):
			// re-read: a renewal verified since the listing must win
			cur, err := h.cfg.Store.Subscription(ctx, s.ID)
			if err != nil {
				next(now) // try again next time
				continue
			}
			if cur.State != SubActive || !now.After(cur.Expires) {
				continue // renewed or removed since: that changed the shard's version
			}
			s = cur
			s.State = SubExpired
			if err := h.cfg.Store.PutSubscription(ctx, s); err != nil {
				h.logger.Error("lease sweep: expire", "id", s.ID, "err", err)
				next(now) // try again next time
				continue
			}
			if h.cfg.Activator != nil {
				h.cfg.Activator.Deactivate(s.ID)
			}
			h.logger.Info("lease ended", "topic", wire.Clip(s.Topic), "callback", wire.Clip(s.Callback))
			next(s.Expires.Add(expiredKept))
		case s.State == SubActive:
			next(s.Expires)
		case s.State == SubExpired && now.After(s.Expires.Add(expiredKept)):
			if err := h.cfg.Store.DeleteSubscription(ctx, s.ID); err != nil {
				h.logger.Error("lease sweep: forget", "id", s.ID, "err", err)
				next(now)
			}
		case s.State == SubExpired:
			next(s.Expires.Add(expiredKept))
		}
	}
	return due
}
