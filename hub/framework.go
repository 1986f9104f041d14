package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Framework Notification channels (RSF-1): every channel has a companion
// channel, named wire.FrameworkChannel(name) and hosted by the hub at
// FrameworkTopic, on which the hub announces changes to the channel's
// capability documents (package pull composes them and publishes them
// through PublishFramework) and the Source may
// publish its own framework notifications. The companion is not stored: it
// is derived from its channel wherever the hub looks a channel up, so every
// hub process of a cluster agrees on it, and it exists exactly as long as
// its channel. Publisher trust is the channel's (a verified channel's
// Source is verified on the channel's own topic); a followed channel's
// framework channel takes no publisher.

// FrameworkTopic returns the topic URI of the framework channel of the
// channel named name, or "" when it has none (wire.FrameworkChannel).
func FrameworkTopic(hubURL, name string) string {
	p := wire.FrameworkTopicPath(name)
	if p == "" {
		return ""
	}
	return originOf(hubURL) + p
}

// originOf returns raw without its path, query and fragment ("" when it
// does not parse), normalised as topics are (wire.NormalizeURL).
func originOf(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return ""
	}
	if j := strings.IndexAny(raw[i+3:], "/?#"); j >= 0 {
		raw = raw[:i+3+j]
	}
	if n, err := wire.NormalizeURL(raw); err == nil {
		raw = strings.TrimSuffix(n, "/")
	}
	return raw
}

// frameworkChannel derives the framework channel named name from its
// channel, or returns ErrNotFound.
func (h *Hub) frameworkChannel(ctx context.Context, name string) (Channel, error) {
	parent, ok := wire.FrameworkParent(name)
	if !ok {
		return Channel{}, ErrNotFound
	}
	p, err := h.storedChannelByName(ctx, parent)
	if err != nil {
		return Channel{}, err
	}
	trust := p.Trust
	if trust == TrustFollow {
		trust = "" // the hub is its only publisher, through its log
	}
	return Channel{
		Topic:          h.origin() + wire.TopicPath(name),
		Name:           name,
		Trust:          trust,
		Token:          p.Token,
		CapabilityList: h.origin() + wire.CapabilityListPath(parent),
		Hosted:         true,
		Created:        p.Created,
		DescribedBy:    p.DescribedBy,
		Private:        p.Private, // its readers are the channel's
	}, nil
}

// frameworkChannelForTopic derives the framework channel whose hosted
// topic URI is topic, or returns ErrNotFound.
func (h *Hub) frameworkChannelForTopic(ctx context.Context, topic string) (Channel, error) {
	name, ok := strings.CutPrefix(topic, h.origin()+wire.TopicPath(""))
	if !ok || !ValidChannelName(name) {
		return Channel{}, ErrNotFound
	}
	return h.frameworkChannel(ctx, name)
}

// frameworkParent returns the channel whose framework channel ch is.
func (h *Hub) frameworkParent(ctx context.Context, ch Channel) (Channel, bool, error) {
	parent, ok := wire.FrameworkParent(ch.Name)
	if !ok || ch.Topic != h.origin()+wire.TopicPath(ch.Name) {
		return Channel{}, false, nil
	}
	p, err := h.storedChannelByName(ctx, parent)
	if errors.Is(err, ErrNotFound) {
		return Channel{}, false, nil
	}
	if err != nil {
		return Channel{}, false, err
	}
	if _, stored := h.cfg.Store.Channel(ctx, ch.Topic); stored == nil {
		return Channel{}, false, nil // an operator's channel of that name
	}
	return p, true, nil
}

// publisherTopic is the topic whose Link headers verify a publisher of ch:
// the channel's own, or for a framework channel its channel's.
func (h *Hub) publisherTopic(ctx context.Context, ch Channel) (string, error) {
	p, ok, err := h.frameworkParent(ctx, ch)
	if err != nil {
		return "", unavailable("the state store", err)
	}
	if ok {
		return p.Topic, nil
	}
	return ch.Topic, nil
}

// frameworkNotification validates a framework-notification payload
// published to a framework channel: capability framework-notification, the
// Strict rules (RSF-3 … RSF-5), from and until optional (RSF-2) and no
// continuity check.
func (h *Hub) frameworkNotification(ch Channel, body []byte, contentType, resourcesync string) (incoming, error) {
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Strict, MaxBytes: h.cfg.MaxBody})
	if err != nil {
		return incoming{}, refuse(ReasonInvalid, "invalid framework notification: %v", err)
	}
	if doc.Kind != changefeed.URLSet || doc.MD.Capability != changefeed.CapFrameworkNotification {
		return incoming{}, refuse(ReasonCapability,
			"wrong capability %q: %s is a framework channel; it takes <urlset> payloads with rs:md capability=\"framework-notification\" (change notifications go to the channel's own topic)",
			wire.Clip(string(doc.MD.Capability)), wire.Clip(ch.Topic))
	}
	return h.incomingOf(ch, doc, body, contentType, resourcesync, false)
}

// isFrameworkChannel reports whether ch is a derived framework channel.
func (h *Hub) isFrameworkChannel(ctx context.Context, ch Channel) (bool, error) {
	_, ok, err := h.frameworkParent(ctx, ch)
	if err != nil {
		return false, fmt.Errorf("framework channel %s: %w", ch.Name, err)
	}
	return ok, nil
}

// checkFrameworkName refuses a channel whose framework channel's name is
// taken by a stored channel. checkNewChannelName refuses every name ending
// in wire.FrameworkSuffix, so only a channel stored before that rule can
// take it; the check covers such stores.
func (h *Hub) checkFrameworkName(ctx context.Context, ch Channel) error {
	fw, ok := wire.FrameworkChannel(ch.Name)
	if !ok {
		return nil
	}
	_, err := h.storedChannelByName(ctx, fw)
	switch {
	case err == nil:
		return fmt.Errorf("%w: name %q: its framework channel's name %q is taken by a stored channel; delete that channel first", ErrChannelTaken, ch.Name, fw)
	case errors.Is(err, ErrNotFound):
		return nil
	}
	return err
}

// frameworkState returns the state of the framework channel whose hosted
// topic is topic, caught up with the log first: the framework
// notifications of pull mode may come through another hub process's
// intake, so the working state learns of them here, and the hosted topic
// answers the latest one (whichever hub process appended it). ok is false when topic is not a
// framework channel's.
func (h *Hub) frameworkState(ctx context.Context, topic string) (st ChannelState, ok bool, err error) {
	ch, err := h.frameworkChannelForTopic(ctx, topic)
	if err != nil {
		return ChannelState{}, false, nil
	}
	unlock, err := h.lockChannel(ctx, commitKey(topic))
	if err != nil {
		return ChannelState{}, true, err
	}
	defer unlock()
	m, err := h.state(ctx, ch)
	if err != nil {
		return ChannelState{}, true, err
	}
	if err := h.catchUp(ctx, ch, m); err != nil {
		return ChannelState{}, true, unavailable("the log", err)
	}
	return cloneState(m.st), true, nil
}
