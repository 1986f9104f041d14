package hub

import (
	"context"
	"fmt"

	"github.com/rshub/rshub/changefeed"
)

// PublishFollowed publishes a Change List the hub fetched from the Source
// of a followed channel (read with ParseFollowed): its entries after the
// channel's continuity anchor become change notifications whose from is the
// previous until, exactly as for a thin ping (publishChangeList). Fetches
// of one channel are serialised with thin pings of its topic.
func (h *Hub) PublishFollowed(ctx context.Context, ch Channel, doc *changefeed.Document) (PublishResult, error) {
	if doc.Kind != changefeed.URLSet || doc.MD.Capability != changefeed.CapChangeList {
		return PublishResult{}, refuse(502, "invalid_topic", "a followed Source served a %q document where a Change List was expected", Truncate(string(doc.MD.Capability)))
	}
	unlock, err := h.lockChannel(ctx, "fetch "+ch.Topic)
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish followed: %w", err)
	}
	defer unlock()
	return h.publishChangeList(ctx, ch, doc)
}
