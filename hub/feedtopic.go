package hub

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/rshub/rshub/wire"
)

// FormatAtom is Subscription.Format for a subscription to a channel's Atom
// feed: its hub.topic is the feed URL, exactly as the subscription
// document's rel="self" gives it (the hub's base, its URL without path,
// followed by wire.FeedPath of the channel's name). The subscription reads
// the channel's history, and each ResourceSync change notification of it
// is pushed as an Atom Feed Document of the notification's entries, with
// the feed URL as rel="self" (delivery renders it); content of the channel
// that is not a ResourceSync change notification is not delivered to it.
// Verification of intent, denial and leases are those of any subscription,
// with the feed URL as hub.topic.
const FormatAtom = "atom"

// feedBase is the base the pull-mode documents are served under: the hub
// URL without path, query or fragment, as the server configures hub/pull,
// normalised (origin).
func (h *Hub) feedBase() string { return h.origin() }

// feedChannel returns the name of the channel whose Atom feed URL is
// topic, or "" when topic is not a feed URL of this hub.
func (h *Hub) feedChannel(topic string) string {
	base := h.feedBase()
	if base == "" {
		return ""
	}
	rest, ok := strings.CutPrefix(topic, base)
	if !ok {
		return ""
	}
	rest, ok = strings.CutPrefix(rest, wire.ChannelPath(""))
	if !ok {
		return ""
	}
	escaped, ok := strings.CutSuffix(rest, "/"+wire.FeedFile)
	if !ok || escaped == "" {
		return ""
	}
	name, err := url.PathUnescape(escaped)
	if err != nil || wire.FeedPath(name) != wire.ChannelPath("")+escaped+"/"+wire.FeedFile {
		return ""
	}
	return name
}

// resolveTopic returns the channel a subscription to topic reads and the
// format of its deliveries: a channel's feed URL resolves to that channel
// with FormatAtom, any other topic as channelFor resolves it.
func (h *Hub) resolveTopic(ctx context.Context, topic string) (Channel, string, error) {
	if name := h.feedChannel(topic); name != "" {
		ch, err := h.ChannelByName(ctx, name)
		if err != nil {
			return Channel{}, "", fmt.Errorf("hub: feed topic %s: %w", wire.Clip(topic), err)
		}
		return ch, FormatAtom, nil
	}
	ch, err := h.channelFor(ctx, topic)
	return ch, "", err
}
