package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
)

// ErrRedriveFailed is matched by the error of a redrive whose callback did
// not accept the notification; the dead letter is kept.
var ErrRedriveFailed = errors.New("delivery: redrive failed")

// Redrive delivers one dead letter of subscription subID again, once and
// out of band: the subscription's queue goes on from its cursor meanwhile.
// The notification is filtered as the subscription's deliveries are
// (filter.go). On a 2xx the dead letter is deleted. A 410 Gone ends the subscription.
// Any other outcome returns an error matching ErrRedriveFailed and keeps
// the dead letter. Unknown subscriptions or dead letters give an error
// matching hub.ErrNotFound.
func (w *Webhooks) Redrive(ctx context.Context, subID, deadLetterID string) error {
	sub, err := w.store.Subscription(ctx, subID)
	if err != nil {
		return fmt.Errorf("delivery: redrive: subscription %s: %w", quote(subID), err)
	}
	dls, err := w.store.DeadLetters(ctx, subID)
	if err != nil {
		return fmt.Errorf("delivery: redrive: dead letters of %s: %w", quote(subID), err)
	}
	for _, d := range dls {
		if d.ID == deadLetterID {
			return w.redrive(ctx, sub, d)
		}
	}
	return fmt.Errorf("delivery: redrive: dead letter %s of %s: %w", quote(deadLetterID), quote(subID), hub.ErrNotFound)
}

// RedriveAll redrives every dead letter of subID in log order, stopping
// at the first that fails. It returns how many were delivered.
func (w *Webhooks) RedriveAll(ctx context.Context, subID string) (int, error) {
	sub, err := w.store.Subscription(ctx, subID)
	if err != nil {
		return 0, fmt.Errorf("delivery: redrive: subscription %s: %w", quote(subID), err)
	}
	dls, err := w.store.DeadLetters(ctx, subID)
	if err != nil {
		return 0, fmt.Errorf("delivery: redrive: dead letters of %s: %w", quote(subID), err)
	}
	for i, d := range dls {
		if err := w.redrive(ctx, sub, d); err != nil {
			return i, err
		}
	}
	return len(dls), nil
}

func (w *Webhooks) redrive(ctx context.Context, sub hub.Subscription, d hub.DeadLetter) error {
	rec, err := w.log.Next(ctx, logChannel(sub), d.Seq)
	if errors.Is(err, hub.ErrNotFound) || (err == nil && rec.Seq != d.Seq) {
		return fmt.Errorf("delivery: redrive: record %d is no longer in the log: %w", d.Seq, hub.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delivery: redrive: reading record %d: %w", d.Seq, err)
	}
	rec, err = w.filters.filteredRecord(rec, sub.Filter)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRedriveFailed, err)
	}
	host := hostOf(sub.Callback)
	slot, err := w.limit.acquire(ctx, host) // an operator's redrive goes even through an open circuit
	if err != nil {
		return fmt.Errorf("delivery: redrive: %w", err)
	}
	t0 := time.Now()
	var t *target
	a := w.post(ctx, nil, &t, sub, rec)
	end := time.Now()
	slot.done(w.settle(host, sub.Callback, a, w.cfg.Clock()), end.Sub(t0), end) // isolate.go
	if a.abandoned {
		return fmt.Errorf("delivery: redrive of %d abandoned: %w", d.Seq, a.err)
	}
	if a.gone() {
		w.Deactivate(sub.ID)
		if err := w.store.DeleteSubscription(ctx, sub.ID); err != nil {
			return fmt.Errorf("delivery: redrive: callback answered 410 Gone; deleting the subscription: %w", err)
		}
		return fmt.Errorf("%w: callback answered 410 Gone; subscription deleted", ErrRedriveFailed)
	}
	if !a.ok() {
		return fmt.Errorf("%w: record %d: %s", ErrRedriveFailed, d.Seq, a.reason())
	}
	if err := w.store.DeleteDeadLetter(ctx, sub.ID, d.ID); err != nil && !errors.Is(err, hub.ErrNotFound) {
		return fmt.Errorf("delivery: redrive: record %d delivered; deleting dead letter: %w", d.Seq, err)
	}
	if q := w.queueFor(sub.ID); q != nil {
		q.update(func(s *SubStats) { s.DeadLetters = max(s.DeadLetters-1, 0) })
	}
	return nil
}
