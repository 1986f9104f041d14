package hub

import (
	"context"

	"github.com/rshub/rshub/wire"
)

// topicLinks is the one place that says what a hosted topic advertises in
// its Link header, each link a route some part of the hub serves: self
// (this route) and hub (the hub URL), resourcesync (the Capability List
// pull mode serves for every stored channel; a framework channel's is its
// channel's), describedby when the channel names a dataset description,
// and rel="alternate" the channel's Atom feed, which pull mode serves for
// stored channels only: a framework channel has no documents of its own,
// so its topic advertises no feed. Last, rel="mercure" names the hub's
// Mercure face (wire.PathMercure), where the topic is a Mercure topic.
func (h *Hub) topicLinks(ctx context.Context, ch Channel) (string, error) {
	links := wire.NotificationLinks(ch.Topic, h.cfg.HubURL, ch.CapabilityList)
	if ch.DescribedBy != "" {
		links += ", " + wire.FormatLinks(wire.Link{Href: ch.DescribedBy, Rels: []string{wire.RelDescribedBy}})
	}
	framework, err := h.isFrameworkChannel(ctx, ch)
	if err != nil {
		return "", err
	}
	if !framework {
		links += ", " + wire.FeedLink(h.origin()+wire.CapabilityListPath(ch.Name))
	}
	return links + ", " + wire.MercureLink(h.origin()), nil
}
