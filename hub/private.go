package hub

import (
	"context"
	"net/http"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// Private channels (Channel.Private): every door of the hub answers a
// caller without a token for the channel exactly as it answers for a topic
// it does not serve; a bad token gets 401, a token without the claim 403
// (package access). Publishers show the channel's own token (trust token)
// or a publisher token whose mercure.publish claim covers the topic. The
// door step (door.go) decides it once per request.

// unknownChannel is the publish doors' answer for a topic the hub does not
// serve, and for a private channel to a publisher without a token.
func unknownChannel(topic string) *PublishError {
	return refuse(ReasonUnknownChannel, "no channel for topic %s on this hub", wire.Clip(topic))
}

// tokenRefusal is a PublishError carrying a token refusal.
func tokenRefusal(ref *access.Refusal) *PublishError {
	r := ReasonInvalidToken
	if ref.Status == http.StatusForbidden {
		r = ReasonInsufficientScope
	}
	pe := refuse(r, "%s", ref.Reason)
	pe.refusal = ref
	return pe
}

// leaseUntil shortens a lease so that it ends when the token it was
// granted with does (at least one second).
func leaseUntil(lease int64, now, until time.Time) int64 {
	if until.IsZero() {
		return lease
	}
	left := int64(until.Sub(now) / time.Second)
	return max(1, min(lease, left))
}

// Subscribers returns the verifier of private channels' readers (nil when
// none is configured), for the doors outside this package.
func (h *Hub) Subscribers() *access.Verifier { return h.cfg.Subscribers }

// denyUnauthorized ends the subscriptions of ch made without a token
// covering it, when ch has become private.
func (h *Hub) denyUnauthorized(ctx context.Context, ch Channel) error {
	topics := []string{ch.Topic, h.feedBase() + wire.FeedPath(ch.Name)}
	if n, ok := otherSpelling(ch.Topic); ok { // a channel stored in another spelling: subscribed in the normal one since
		topics = append(topics, n)
	}
	for _, topic := range topics {
		subs, err := h.cfg.Store.Subscriptions(ctx, topic)
		if err != nil {
			return err
		}
		for _, s := range subs {
			if s.Authorized {
				continue
			}
			if err := h.DenySubscription(ctx, s, "topic is not served by this hub"); err != nil {
				return err
			}
		}
	}
	return nil
}
