package delivery

import (
	"bytes"
	"fmt"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/atomfeed"
	"github.com/rshub/rshub/wire"
)

// Atom subscriptions (hub.FormatAtom): a subscriber of a channel's feed URL
// receives each ResourceSync change notification of the channel (after its
// filter, or the coalesced run) as an Atom Feed Document of the
// notification's entries, written by hub/atomfeed with the entry mapping
// of the hub's feed documents: atom:id the resource, atom:updated the
// change's datetime, an alternate link unless deleted, a deletion entry
// with an empty atom:content, the ResourceSync metadata as rs:md and rs:ln
// (an entry without lastmod gets the change's datetime, else the
// notification's until, as in the Change Lists). The POST carries
// Content-Type application/atom+xml and one Link header naming the feed
// URL as rel="self" and the hub as rel="hub"; HeaderSeq and the
// signatures are as for any delivery, computed over the Atom body sent.
// Content of the channel that is not a readable ResourceSync change
// notification (another body, a framework or other capability) is skipped
// for Atom subscribers: their cursor moves past it without a POST.

// atomRecord returns rec as an Atom subscriber of feed receives it, or
// false when rec is not a ResourceSync change notification.
func (w *Webhooks) atomRecord(rec wire.Record, feed string) (wire.Record, bool, error) {
	if !rec.IsXML() {
		return rec, false, nil
	}
	doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil || doc.Kind != changefeed.URLSet {
		return rec, false, nil
	}
	switch doc.MD.Capability {
	case changefeed.CapChangeNotification, changefeed.CapChangeListNotification:
	default:
		return rec, false, nil
	}
	entries := make([]changefeed.Entry, 0, len(doc.Entries))
	for _, e := range doc.Entries {
		if e.Loc == "" {
			continue
		}
		if e.LastMod.IsZero() {
			if e.MD != nil && !e.MD.DateTime.IsZero() {
				e.LastMod = e.MD.DateTime
			} else if !rec.Until.IsZero() {
				e.LastMod = changefeed.NewDateTime(rec.Until)
			}
		}
		entries = append(entries, e)
	}
	updated := rec.Until
	if updated.IsZero() {
		updated = rec.Received
	}
	var buf bytes.Buffer
	f := &atomfeed.Feed{Name: rec.Channel, Self: feed, Current: feed, Hub: w.cfg.HubURL, Topic: rec.Topic, Updated: updated, Entries: entries}
	if err := atomfeed.Write(&buf, f); err != nil {
		return rec, false, fmt.Errorf("delivery: rendering record %d as Atom: %w", rec.Seq, err)
	}
	rec.Body = buf.Bytes()
	rec.ContentType = wire.MediaTypeAtom
	rec.Topic = feed
	rec.ResourceSync = ""
	return rec, true, nil
}
