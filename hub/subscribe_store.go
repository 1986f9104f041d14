package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rshub/rshub/internal/loophealth"
)

// What a verified request does to the store. Once the subscriber has
// echoed the challenge it may consider itself subscribed (or
// unsubscribed), so a store that fails then is not the end of it: the
// load and the write are retried with capped exponential backoff
// (loophealth.Delay) for Config.StoreRetry on the hub's clock, each
// attempt bounded by storeAttempt. A subscribe the store still does not
// take is denied (hub.mode=denied, denyUnstored), after a last attempt to
// delete what a write that timed out may have stored, so that the
// subscriber is told what holds; the hub's observer counts it (Unstored).
// An unsubscribe the store does not take is counted and logged, and not
// denied: WebSub's denial refuses a subscription, which would tell the
// subscriber nothing true; its deliveries go on, and answering one with
// 410 Gone ends the subscription (delivery/webhook.go).
//
// When the hub stops meanwhile the retries stop at once, and a subscribe
// is denied as above, with a context that the stop does not cancel (Run
// waits for the verification workers).

// DefaultStoreRetry is how long a verified request's store write is
// retried when Config.StoreRetry is zero.
const DefaultStoreRetry = 30 * time.Second

// storeAttempt bounds one attempt at a store write, for a store that
// would otherwise never answer.
const storeAttempt = 10 * time.Second

// denyUnstored is the hub.reason of a subscribe the store did not take.
const denyUnstored = "the hub could not store the subscription; subscribe again later"

// storeRetry returns Config.StoreRetry, or its default.
func (h *Hub) storeRetry() time.Duration {
	if h.cfg.StoreRetry > 0 {
		return h.cfg.StoreRetry
	}
	return DefaultStoreRetry
}

// retryStore calls fn until it works, ctx ends or StoreRetry has passed
// on the hub's clock since the first call, waiting loophealth.Delay
// between calls, and returns fn's last error.
func (h *Hub) retryStore(ctx context.Context, logger *slog.Logger, op string, fn func(context.Context) error) error {
	deadline := h.cfg.Now().Add(h.storeRetry())
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, storeAttempt)
		err := fn(actx)
		cancel()
		if err == nil {
			if n > 1 {
				logger.Info(op+": the store took it after retries", "attempts", n)
			}
			return nil
		}
		if ctx.Err() != nil || !h.cfg.Now().Before(deadline) {
			return fmt.Errorf("%s: %d attempts: %w", op, n, err)
		}
		logger.Warn(op+": retrying", "attempt", n, "err", err)
		if !loophealth.Wait(ctx, loophealth.Delay(n)) {
			return fmt.Errorf("%s: %d attempts: %w", op, n, errors.Join(err, ctx.Err()))
		}
	}
}

// applySubscribe stores the subscription j's verified request asked for,
// reading from the log's startSeq when it is new, and activates it; or,
// when the store does not take it (see above), denies it.
func (h *Hub) applySubscribe(ctx context.Context, logger *slog.Logger, j verifyJob, ch Channel, format string, startSeq uint64) {
	id := SubscriptionID(j.topic, j.callback)
	sub, err := h.storeVerified(ctx, logger, j, id, ch, format, startSeq)
	if err != nil {
		h.denyUnstored(ctx, logger, j, id, err)
		return
	}
	if err := h.dropLegacy(ctx, j.givenID, id); err != nil { // replaced by sub
		logger.Error("subscribe: the subscription under the request's spelling", "err", err)
	}
	logger.Info("subscribed", "lease", j.lease, "expires", sub.Expires)
}

// storeVerified writes subscription id as j's verified request asks,
// retrying the store (retryStore), and hands it to the delivery engine,
// all under the subscription's lock (lockSub).
func (h *Hub) storeVerified(ctx context.Context, logger *slog.Logger, j verifyJob, id string, ch Channel, format string, startSeq uint64) (Subscription, error) {
	unlock, err := h.lockSub(ctx, id)
	if err != nil {
		return Subscription{}, err
	}
	defer unlock()
	now := h.cfg.Now().UTC()
	var sub Subscription
	err = h.retryStore(ctx, logger, "subscribe: store", func(ctx context.Context) error {
		var err error
		sub, err = h.cfg.Store.Subscription(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			sub = Subscription{ID: id, Topic: j.topic, Callback: j.callback, Created: now, StartSeq: startSeq}
		case err != nil:
			return fmt.Errorf("load: %w", err)
		}
		sub.Channel = ch.Name
		sub.Secret = j.secret
		sub.Scheme = j.scheme
		sub.Filter = j.filter
		sub.Coalesce = j.coalesce
		sub.Rate = j.rate
		sub.Format = format
		sub.Authorized = j.door.Authorized
		sub.Lease = j.lease
		sub.Verified = now
		sub.Expires = Expiry(now, j.lease)
		sub.State = SubActive
		return h.cfg.Store.PutSubscription(ctx, sub)
	})
	if err != nil {
		return Subscription{}, err
	}
	if h.cfg.Activator != nil {
		h.cfg.Activator.Activate(sub)
	}
	return sub, nil
}

// denyUnstored ends a verified subscribe the store did not take: it
// deletes what a write that timed out may have stored, counts it and
// tells the subscriber, with a context the hub's stop does not cancel.
func (h *Hub) denyUnstored(ctx context.Context, logger *slog.Logger, j verifyJob, id string, err error) {
	logger.Error("subscribe: the store did not take a verified subscription; denying it", "err", err)
	ctx = context.WithoutCancel(ctx)
	dctx, cancel := context.WithTimeout(ctx, storeAttempt)
	if err := h.dropSubscription(dctx, id); err != nil {
		logger.Error("subscribe: deleting what the failed writes may have stored", "err", err)
	}
	cancel()
	h.deny(ctx, j.callback, j.topic, denyUnstored)
	h.obs.Unstored(j.mode)
}

// applyUnsubscribe deletes the subscription j's verified request ended,
// under the normal and the request's own spelling, and stops its
// deliveries; a store that does not take it is counted (see above).
func (h *Hub) applyUnsubscribe(ctx context.Context, logger *slog.Logger, j verifyJob) {
	id := SubscriptionID(j.topic, j.callback)
	err := h.retryStore(ctx, logger, "unsubscribe", func(ctx context.Context) error {
		if err := h.dropSubscription(ctx, id); err != nil {
			return err
		}
		return h.dropLegacy(ctx, j.givenID, id)
	})
	if err != nil {
		h.obs.Unstored(j.mode)
		logger.Error("unsubscribe: the store did not take a verified unsubscribe; the subscription stays", "err", err)
		return
	}
	logger.Info("unsubscribed")
}
