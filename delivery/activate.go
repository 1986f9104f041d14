package delivery

import (
	"time"

	"github.com/rshub/rshub/hub"
)

// Subscriptions coming and going between reconciles: the hub tells the
// engine of a subscription verified or ended as it happens.

// Activate starts delivering to sub without waiting for the next
// reconcile, or updates a running queue (a renewed lease, a new secret).
// The hub calls it right after verifying a subscription. Subscriptions
// that are not active or whose lease has ended are ignored, and so are
// those of a shard this engine does not hold: the hub holding it starts
// them at its next reconcile.
func (w *Webhooks) Activate(sub hub.Subscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	delete(w.deactivated, sub.ID)
	if w.runCtx == nil {
		w.pending[sub.ID] = sub
		return
	}
	if !deliverable(sub, w.cfg.Clock()) {
		return
	}
	if q := w.queues[sub.ID]; q != nil {
		q.setSub(sub, w.gen)
		return
	}
	if w.ownsLocked(hub.ShardOf(sub.ID)) {
		w.startLocked(sub, nil)
	}
}

// Deactivate stops delivering to the subscription id. An attempt in flight
// is abandoned and its notification will be delivered again if the
// subscription comes back.
func (w *Webhooks) Deactivate(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.deactivated[id] = w.gen
	delete(w.pending, id)
	if q := w.queues[id]; q != nil {
		w.retireLocked(q)
	}
}

// deliverable reports whether s should have a running queue at now.
func deliverable(s hub.Subscription, now time.Time) bool {
	return s.State == hub.SubActive && !expired(s, now)
}

func expired(s hub.Subscription, now time.Time) bool {
	return !s.Expires.IsZero() && !now.Before(s.Expires)
}

// retireLocked stops q; w.mu is held. A parked q finishes at once, a
// running one stays retired until its goroutine ends.
func (w *Webhooks) retireLocked(q *queue) {
	delete(w.queues, q.id)
	w.retired[q.id] = q
	q.stopLocked()
}
