package hub

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// Private channels (Channel.Private): every door of the hub answers a
// caller without a token for the channel exactly as it answers for a topic
// it does not serve; a bad token gets 401, a token without the claim 403
// (package access). Publishers show the channel's own token (trust token)
// or a publisher token whose mercure.publish claim covers the topic.

// unknownChannel is the publish doors' answer for a topic the hub does not
// serve, and for a private channel to a publisher without a token.
func unknownChannel(topic string) *PublishError {
	return refuse(reasonUnknownChannel, "no channel for topic %s on this hub", wire.Clip(topic))
}

// noChannel answers a publish to a topic the hub does not serve: 401 when
// the request carries a publisher token that does not verify (as a private
// channel would answer it), else 404.
func (h *Hub) noChannel(ctx context.Context, r *http.Request, topic string) error {
	return h.privatePublisher(ctx, r, Channel{Topic: topic}, false)
}

// checkPrivatePublisher admits the publisher of a private channel: the
// channel's own token, or a publisher token covering its topic.
func (h *Hub) checkPrivatePublisher(ctx context.Context, r *http.Request, ch Channel) error {
	if ch.Trust == TrustToken {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(ch.Token)) == 1 {
			return nil
		}
	}
	return h.privatePublisher(ctx, r, ch, true)
}

// privatePublisher is the publisher token check of a private channel
// (found) or of a topic the hub does not serve.
func (h *Hub) privatePublisher(ctx context.Context, r *http.Request, ch Channel, found bool) error {
	_, ref := h.cfg.Publishers.Door(ctx, r, access.Publish, found, true, ch.Topic, "")
	switch {
	case ref == nil:
		return nil
	case ref.NotFound():
		return unknownChannel(ch.Topic)
	}
	return tokenRefusal(ref)
}

// tokenRefusal is a PublishError carrying a token refusal.
func tokenRefusal(ref *access.Refusal) *PublishError {
	r := reasonInvalidToken
	if ref.Status == http.StatusForbidden {
		r = reasonInsufficientScope
	}
	pe := refuse(r, "%s", ref.Reason)
	pe.refusal = ref
	return pe
}

// admitSubscriber checks the token of a subscribe request to topic: it
// returns whether the subscriber showed a token covering a private
// channel's topic and when that token expires, or the refusal to answer
// with (401, 403). A caller without a token is not refused here: its
// subscription is denied later, as for a topic the hub does not serve.
func (h *Hub) admitSubscriber(ctx context.Context, r *http.Request, topic string) (authorized bool, until time.Time, ref *access.Refusal) {
	ch, err := h.peekTopic(ctx, topic)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, time.Time{}, nil // the verification answers for a store that does not
	}
	g, ref := h.cfg.Subscribers.Door(ctx, r, access.Subscribe, err == nil, ch.Private, ch.Topic, "")
	switch {
	case ref == nil:
		return ch.Private, g.Expires, nil
	case ref.NotFound():
		return false, time.Time{}, nil
	}
	return false, time.Time{}, ref
}

// peekTopic finds the channel of a topic or feed URL without creating one.
func (h *Hub) peekTopic(ctx context.Context, topic string) (Channel, error) {
	if name := h.feedChannel(topic); name != "" {
		return h.ChannelByName(ctx, name)
	}
	return h.lookupChannel(ctx, topic)
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
	for _, topic := range []string{ch.Topic, h.feedBase() + wire.FeedPath(ch.Name)} {
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
