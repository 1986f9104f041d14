package pull

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Channel additions and removals (RSF-1, RSF-2): a channel added to the
// hub creates its Capability List and changes the Source Description; a
// channel removed deletes its Capability List and changes the Source
// Description. The Pull announces them, derived from the channel set as
// stored:
//
//   - a channel added: on its framework channel its Capability List
//     created and the Source Description updated; on every other channel's
//     framework channel the Source Description updated (its changes go on
//     every framework channel, those of the channels that existed then).
//     The entries' datetime is the channel's Created time.
//   - a channel removed: its framework channel is gone with it, so on
//     every remaining channel's framework channel the Source Description
//     updated and the removed channel's Capability List deleted, without a
//     datetime (the store does not say when).
//
// Each notification's idempotency key depends only on the change (the
// target channel, the changed channel's name and Created time), so it is
// the same on every hub process and after a restart: the log stores it
// once, and the Pull skips a key it has read in the log
// (frameworkRecordLocked notes them). Only changes within FrameworkHorizon
// are announced, so the keys read are forgotten after twice that long:
// the set stays bounded, as is the set of additions already announced
// (kept so that a Sync does not build their notifications again). Channels created more than FrameworkHorizon ago
// are history. A removal is seen by a process that listed the channel
// before and does not any more; one made while no hub process was running
// is not announced.

// removal is a channel gone from the listing, not yet announced.
type removal struct {
	ch      hub.Channel
	noticed time.Time
}

// seenRetention is how long the key of a framework record read in the log
// is remembered: longer than any change still announced.
const seenRetention = 2 * FrameworkHorizon

// announceChannels appends the announcements of recently added and
// removed channels not yet in the log; the caller holds syncMu and has
// read the log to its end.
func (p *Pull) announceChannels(ctx context.Context) error {
	p.mu.RLock()
	on := p.idx.fw.on
	p.mu.RUnlock()
	if !on {
		return nil
	}
	list, gen, err := p.listing(ctx, false)
	if err != nil {
		return fmt.Errorf("pull: channel announcements: %w", err)
	}
	now := time.Now()
	p.mu.Lock()
	p.idx.fw.pruneLocked(now)
	if gen == p.idx.fw.announced {
		// this list was gone through, and everything it called for is in
		// the log: only a new list can call for more (and Syncs, one per
		// append, must not each cost a pass over every channel)
		p.mu.Unlock()
		return nil
	}
	removed := p.idx.fw.noteListingLocked(list, now)
	p.mu.Unlock()
	for _, added := range list {
		if _, fw := wire.FrameworkParent(added.Name); fw || added.Created.IsZero() || now.Sub(added.Created) > FrameworkHorizon {
			continue
		}
		id := added.Name + "\x00" + added.Created.UTC().Format(time.RFC3339Nano)
		p.mu.RLock()
		_, done := p.idx.fw.added[id]
		p.mu.RUnlock()
		if done {
			continue
		}
		for _, target := range list {
			if target.Created.After(added.Created) {
				continue // it did not exist yet
			}
			rec, ok := p.channelNotification(target.Name, added, false)
			if !ok {
				continue
			}
			if err := p.appendOnce(ctx, rec); err != nil {
				return fmt.Errorf("pull: announcing channel %s added on %s: %w", added.Name, rec.Channel, err)
			}
		}
		p.mu.Lock()
		if p.idx.fw.added == nil {
			p.idx.fw.added = map[string]time.Time{}
		}
		p.idx.fw.added[id] = added.Created
		p.mu.Unlock()
	}
	for _, gone := range removed {
		for _, target := range list {
			rec, ok := p.channelNotification(target.Name, gone.ch, true)
			if !ok {
				continue
			}
			if err := p.appendOnce(ctx, rec); err != nil {
				return fmt.Errorf("pull: announcing channel %s removed on %s: %w", gone.ch.Name, rec.Channel, err)
			}
		}
		p.mu.Lock()
		delete(p.idx.fw.removed, gone.ch.Name)
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.idx.fw.announced = gen
	p.mu.Unlock()
	return nil
}

// appendOnce appends rec unless the log is known to hold its key.
func (p *Pull) appendOnce(ctx context.Context, rec hub.Record) error {
	p.mu.RLock()
	_, done := p.idx.fw.seen[rec.Key]
	p.mu.RUnlock()
	if done {
		return nil
	}
	rec.Received = time.Now().UTC()
	if _, _, err := p.log.Append(ctx, rec); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	p.mu.Lock()
	p.idx.fw.noteSeenLocked(rec.Key, rec.Received)
	p.mu.Unlock()
	return nil
}

// channelNotification builds the framework notification on target's
// framework channel of channel ch having been added, or removed when gone.
// It reports false when target has no framework channel, or is ch removed.
func (p *Pull) channelNotification(target string, ch hub.Channel, gone bool) (hub.Record, bool) {
	topic := hub.FrameworkTopic(p.cfg.HubURL, target)
	fwName, ok := wire.FrameworkChannel(target)
	if topic == "" || !ok || (gone && target == ch.Name) {
		return hub.Record{}, false
	}
	var when changefeed.DateTime
	if !gone {
		when = changefeed.NewDateTime(ch.Created.UTC())
	}
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: md()}}
	doc.MD.Capability = changefeed.CapFrameworkNotification
	doc.Links = []changefeed.Link{link("up", p.descriptionURL())}
	add := func(loc string, capa changefeed.Capability, change changefeed.Change) {
		e := changefeed.Entry{Loc: loc, MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.Capability, e.MD.Change, e.MD.DateTime = capa, change, when
		doc.Entries = append(doc.Entries, e)
	}
	switch {
	case gone:
		add(p.capabilityURL(ch.Name), changefeed.CapCapabilityList, changefeed.Deleted)
	case target == ch.Name:
		add(p.capabilityURL(ch.Name), changefeed.CapCapabilityList, changefeed.Created)
	}
	add(p.descriptionURL(), changefeed.CapDescription, changefeed.Updated)
	var b bytes.Buffer
	if err := changefeed.Encode(&b, doc); err != nil {
		p.logger.Warn("framework notification not built", "channel", target, "err", err)
		return hub.Record{}, false
	}
	body := b.Bytes()
	key := hub.FrameworkKey(topic, body)
	if gone { // the body has no datetime: the key names the removed incarnation
		key = hub.FrameworkKey(topic, append(append([]byte(nil), body...), ch.Created.UTC().Format(time.RFC3339Nano)...))
	}
	return hub.Record{
		Topic:        topic,
		Channel:      fwName,
		ContentType:  "application/xml",
		ResourceSync: p.capabilityURL(target),
		Key:          key,
		Entries:      len(doc.Entries),
		Body:         body,
	}, true
}

// noteListingLocked remembers list as the channels known and returns the
// removals still to announce: those noted before, and the channels known
// from the previous listing that list lacks. Removals noticed more than
// FrameworkHorizon ago are dropped. The caller holds mu.
func (fw *frameworkState) noteListingLocked(list []hub.Channel, now time.Time) []removal {
	now = now.UTC()
	listed := make(map[string]hub.Channel, len(list))
	for _, ch := range list {
		if _, isFw := wire.FrameworkParent(ch.Name); !isFw {
			listed[ch.Name] = ch
		}
	}
	for name, ch := range fw.known {
		if _, ok := listed[name]; ok {
			continue
		}
		if fw.removed == nil {
			fw.removed = map[string]removal{}
		}
		if _, ok := fw.removed[name]; !ok {
			fw.removed[name] = removal{ch: ch, noticed: now}
		}
	}
	fw.known = listed
	out := make([]removal, 0, len(fw.removed))
	for name, r := range fw.removed {
		if now.Sub(r.noticed) > FrameworkHorizon {
			delete(fw.removed, name)
			continue
		}
		out = append(out, r)
	}
	return out
}

// noteSeenLocked records that the log holds the framework notification
// with idempotency key key, received at; the caller holds mu.
func (fw *frameworkState) noteSeenLocked(key string, at time.Time) {
	if fw.seen == nil {
		fw.seen = map[string]time.Time{}
	}
	if at.IsZero() {
		at = time.Now()
	}
	fw.seen[key] = at
}

// pruneLocked forgets the keys of framework records received more than
// seenRetention ago, at most once a minute; the caller holds mu.
func (fw *frameworkState) pruneLocked(now time.Time) {
	if now.Sub(fw.pruned) < time.Minute {
		return
	}
	fw.pruned = now
	for key, at := range fw.seen {
		if now.Sub(at) > seenRetention {
			delete(fw.seen, key)
		}
	}
	for id, created := range fw.added {
		if now.Sub(created) > FrameworkHorizon {
			delete(fw.added, id)
		}
	}
}
