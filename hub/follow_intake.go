package hub

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Followed is what a follower publishes from one Change List it fetched
// from a followed channel's Source.
type Followed struct {
	// Doc is the fetched list (read with ParseFollowed): its times are
	// checked against the hub's clock, its rel="up" names the Capability
	// List in the notifications.
	Doc *changefeed.Document
	// Entries are the changes to publish, in chronological order.
	Entries []changefeed.Entry
	// From is the channel's last until, or later when the Source no longer
	// lists what came between (the hub records a gap); Until is at or after
	// the last entry's time.
	From, Until time.Time
}

// PublishFollowed publishes what a follower chose from a fetched Change
// List as change notifications of at most changefeed.DefaultMaxEntries
// entries, contiguous from f.From to f.Until. The follower decides which
// entries are new (it tracks them by identity, not by time); the log's
// continuity check still applies. Fetches of one channel are serialised
// with thin pings of its topic.
func (h *Hub) PublishFollowed(ctx context.Context, ch Channel, f Followed) (PublishResult, error) {
	doc := f.Doc
	if doc == nil || doc.Kind != changefeed.URLSet || doc.MD.Capability != changefeed.CapChangeList {
		capa := ""
		if doc != nil {
			capa = string(doc.MD.Capability)
		}
		return PublishResult{}, refuse(ReasonInvalidTopic, "a followed Source served a %q document where a Change List was expected", wire.Clip(capa))
	}
	if err := h.checkNotFuture(doc, ReasonInvalidTopic); err != nil {
		return PublishResult{}, err
	}
	if len(f.Entries) == 0 {
		return PublishResult{Unchanged: true}, nil
	}
	unlock, err := h.lockChannel(ctx, fetchKey(ch.Topic))
	if err != nil {
		return PublishResult{}, fmt.Errorf("publish followed: %w", err)
	}
	defer unlock()
	return h.publishEntries(ctx, ch, f.From, f.Until, upOf(ch, doc), f.Entries)
}

// maxAnchorRecords bounds the notifications FollowAnchor reads, and
// maxAnchorProbes the log reads it makes to find them.
const (
	maxAnchorRecords = 64
	maxAnchorProbes  = 256
)

// FollowAnchor returns a channel's state and the entries of its last
// notifications whose time is its anchor (LastUntil), which a follower
// needs to tell a change made at that same instant from one it published.
// Those entries are in the last notification and, while a notification
// starts at the anchor too (from = until), in the ones before it. known is
// false when the log no longer holds them or they are more than
// FollowAnchor reads.
func (h *Hub) FollowAnchor(ctx context.Context, ch Channel) (st ChannelState, atAnchor []changefeed.Entry, known bool, err error) {
	st, err = h.Continuity(ctx, ch)
	if err != nil || st.LastSeq == 0 {
		return st, nil, err == nil, err
	}
	probes := 0
	for seq, n := st.LastSeq, 0; n < maxAnchorRecords; n++ {
		rec, err := h.cfg.Log.Next(ctx, ch.Name, seq)
		if err != nil || rec.Seq != seq {
			return st, nil, false, nil
		}
		doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient, MaxBytes: h.cfg.MaxBody})
		if err != nil {
			return st, nil, false, nil
		}
		for _, e := range doc.Entries {
			if changefeed.EntryTime(e).Equal(st.LastUntil) {
				atAnchor = append(atAnchor, e)
			}
		}
		if !rec.From.Equal(st.LastUntil) {
			return st, atAnchor, true, nil
		}
		if seq, err = h.previousRecord(ctx, ch.Name, seq, &probes); err != nil || seq == 0 {
			return st, atAnchor, err == nil, nil
		}
	}
	return st, nil, false, nil
}

// previousRecord returns the sequence of the channel's record before seq
// (0 when there is none), galloping back through the log, counting its
// reads in probes; it fails past maxAnchorProbes.
func (h *Hub) previousRecord(ctx context.Context, channel string, seq uint64, probes *int) (uint64, error) {
	lo := uint64(0)
	for step := uint64(1); ; step *= 2 {
		if *probes++; *probes > maxAnchorProbes {
			return 0, fmt.Errorf("more than %d log reads", maxAnchorProbes)
		}
		at := uint64(1)
		if seq > step {
			at = seq - step
		}
		rec, err := h.cfg.Log.Next(ctx, channel, at)
		if err != nil {
			return 0, err
		}
		if rec.Seq < seq {
			lo = rec.Seq
			break
		}
		if at == 1 {
			return 0, nil
		}
	}
	for {
		if *probes++; *probes > maxAnchorProbes {
			return 0, fmt.Errorf("more than %d log reads", maxAnchorProbes)
		}
		rec, err := h.cfg.Log.Next(ctx, channel, lo+1)
		if err != nil {
			return 0, err
		}
		if rec.Seq >= seq {
			return lo, nil
		}
		lo = rec.Seq
	}
}

// upOf is the Capability List a notification made from doc names.
func upOf(ch Channel, doc *changefeed.Document) string {
	if up := doc.Link("up"); up != "" {
		return up
	}
	return ch.CapabilityList
}
