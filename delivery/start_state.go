package delivery

import (
	"context"

	"github.com/rshub/rshub/hub"
)

// startState is what a listing of its shard read for a queue it starts:
// the subscription (so the queue reads it no more) and, when the store
// could read them in bulk, its cursor and whether it may hold dead
// letters. A hub restarting with many subscriptions then makes a few
// passes over the store instead of requests per subscription.
type startState struct {
	read    bool // stored, cur and mayDead were read with the listing
	stored  bool // a cursor is stored: cur
	cur     hub.Cursor
	mayDead bool // dead letters may be stored: read them
}

// cursor returns id's stored cursor, from s when read, else from st.
func (s *startState) cursor(ctx context.Context, st Store, id string) (hub.Cursor, error) {
	switch {
	case s == nil || !s.read:
		return st.Cursor(ctx, id)
	case !s.stored:
		return hub.Cursor{}, hub.ErrNotFound
	}
	return s.cur, nil
}

// deadLetters returns the number of id's dead letters, reading them from
// st unless s knows there are none.
func (s *startState) deadLetters(ctx context.Context, st Store, id string) (int, error) {
	if s != nil && s.read && !s.mayDead {
		return 0, nil
	}
	dls, err := st.DeadLetters(ctx, id)
	return len(dls), err
}

// prefetch returns the start state of the subscriptions of byShard, a
// listing, with their cursors and dead letters read in bulk for the shards
// where the engine runs no queue yet (just taken, or the engine is
// starting): there no queue can have stored a cursor since this read. A
// store that cannot, or fails to, leaves the queues to read them.
func (w *Webhooks) prefetch(ctx context.Context, byShard map[int][]hub.Subscription) map[string]*startState {
	out := map[string]*startState{}
	for _, subs := range byShard {
		for _, s := range subs {
			out[s.ID] = &startState{}
		}
	}
	sr, ok := w.store.(hub.DeliveryStateReader)
	if !ok {
		return out
	}
	busy := map[int]bool{}
	w.mu.Lock()
	for _, qs := range []map[string]*queue{w.queues, w.retired} {
		for _, q := range qs {
			busy[q.shard] = true
		}
	}
	w.mu.Unlock()
	var ids []string
	for n, subs := range byShard {
		if busy[n] {
			continue
		}
		for _, s := range subs {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return out
	}
	cursors, mayDead, err := sr.DeliveryStates(ctx, ids)
	if err != nil {
		w.logger.Warn("delivery states not read in bulk; each queue reads its own", "err", err)
		return out
	}
	for _, id := range ids {
		c, stored := cursors[id]
		*out[id] = startState{read: true, stored: stored, cur: c, mayDead: mayDead[id]}
	}
	return out
}
