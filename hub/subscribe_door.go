package hub

import (
	"context"
	"errors"
	"log/slog"
)

// What a verification of intent does with the door step's answer
// (door.go): the subscription's channel, a private channel hidden from a
// subscriber without a grant, and denials.
//
// A private channel the subscriber has no grant for is answered as a topic
// the hub does not serve: denied with that reason on a hub without
// --open-topics; on an --open-topics hub, where such a topic would get a
// channel and a verification of intent, it gets the same verification
// (phantomVerify) and then nothing: no channel shadowing the private one,
// no subscription, nothing delivered (an unknown topic's new channel has
// nothing to deliver either until someone publishes to it). A feed URL
// the hub does not serve is denied on any hub, and so is a hidden one.
//
// A subscribe request is denied only for what it asked: when its callback
// already holds an active subscription to the topic (which a request
// without a grant could not change), the hub sends that callback nothing,
// neither hub.mode=denied nor a verification, so a caller naming another
// subscriber's callback cannot make the hub tell its owner the
// subscription was refused while it stays active.

// errPhantom: the subscription names a private channel the subscriber has
// no grant for, on an --open-topics hub (phantomVerify).
var errPhantom = errors.New("a private channel, hidden as a new topic")

// subscriptionChannel returns the channel j's subscription reads and the
// format of its deliveries, from j's door step: the channel found, or for
// a topic not found an --open-topics hub's new channel (resolveTopic);
// ErrNotFound for one the hub does not serve or a hidden private channel
// (errPhantom on an --open-topics hub). An unsubscribe needs none.
func (h *Hub) subscriptionChannel(ctx context.Context, j verifyJob) (Channel, string, error) {
	d := j.door
	hidden := func(feed bool) error {
		if !h.cfg.OpenTopics || feed {
			return ErrNotFound
		}
		if err := h.phantomRoom(ctx); err != nil {
			return err // as a new topic's channel would be refused
		}
		return errPhantom
	}
	switch {
	case j.mode != "subscribe":
		return Channel{}, "", nil
	case d.Found:
		return d.Channel, d.Format, nil
	case d.Hidden:
		return Channel{}, "", hidden(h.feedChannel(j.topic) != "")
	}
	ch, format, err := h.resolveTopic(ctx, j.topic)
	if err == nil && ch.Private && !d.Authorized { // made private since the door step
		return Channel{}, "", hidden(format != "")
	}
	return ch, format, err
}

// phantomVerify verifies j's intent as for a topic an --open-topics hub
// would create a channel for, and stores nothing (see errPhantom).
func (h *Hub) phantomVerify(ctx context.Context, logger *slog.Logger, j verifyJob) {
	if h.holdsActive(ctx, j) {
		logger.Info("verification not sent: the callback holds an active subscription to the topic that this request could not change")
		return
	}
	ok, why := h.verifyIntent(ctx, j, newChallenge())
	h.obs.Verified(j.mode, ok)
	if !ok {
		logger.Info("verification of intent failed; state unchanged", "reason", why)
		return
	}
	logger.Info("verified; nothing stored: the topic is a private channel the subscriber has no grant for")
}

// holdsActive reports whether j's callback holds an active subscription to
// j's topic (under the normal or the request's own spelling).
func (h *Hub) holdsActive(ctx context.Context, j verifyJob) bool {
	for _, id := range []string{SubscriptionID(j.topic, j.callback), j.givenID} {
		if id == "" {
			continue
		}
		if sub, err := h.cfg.Store.Subscription(ctx, id); err == nil && sub.State == SubActive {
			return true
		}
	}
	return false
}
