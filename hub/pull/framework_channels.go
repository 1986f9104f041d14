package pull

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
//   - a channel added: on its own framework channel, at once, its
//     Capability List created and the Source Description updated, at the
//     channel's Created time.
//   - on every other channel's framework channel (those of the channels
//     that existed then) the Source Description updated: once for all the
//     channels created in the same DescriptionBatch window (RSF-6), at the
//     latest of their Created times, once the window has passed. Adding
//     10,000 channels in a minute thus appends about 20,000 notifications,
//     not one per channel on every framework channel (50 million).
//   - channels removed: their framework channels are gone with them, so
//     on every remaining channel's framework channel the Source
//     Description updated and the removed channels' Capability Lists
//     deleted (the first maxDeletedEntries of them by name; the updated
//     Source Description lists what remains): once for all the removals
//     noticed in the same DescriptionBatch window, dated by the end of
//     that window (the store does not record when a channel was deleted;
//     it was by then, and every process that noticed it in that window
//     writes the same bytes, hence the same idempotency key).
//
// Each notification's idempotency key depends only on the change (the
// target channel, the changed channels' names and Created times), so it
// is the same on every hub process and after a restart: the log stores it
// once, and the Pull skips a key it has read in the log
// (frameworkRecordLocked notes them). Removals are grouped by when this
// process noticed them, which may differ between processes by a listing:
// two processes may then announce one removal in two notifications. Only
// changes within FrameworkHorizon are announced, so the keys read are
// forgotten after twice that long: the set stays bounded, as is the set of
// additions already announced (kept so that a Sync does not build their
// notifications again). Channels created more than FrameworkHorizon ago
// are history. A removal is seen by a process that listed the channel
// before and does not any more; one made while no hub process was running
// is not announced.

// DescriptionBatch is the window whose channel additions (by Created time)
// or removals (by when they were noticed) are announced together on the
// other channels' framework channels; they are announced once the window
// and batchSettle have passed.
const DescriptionBatch = time.Minute

// batchSettle is how long after its window a batch waits for channels
// created in it to show in the listings of every hub process.
const batchSettle = 5 * time.Second

// maxDeletedEntries bounds the Capability Lists deleted that one removal
// notification names.
const maxDeletedEntries = 100

// removal is a channel gone from the listing, not yet announced.
type removal struct {
	ch      hub.Channel
	noticed time.Time
}

// seenRetention is how long the key of a framework record read in the log
// is remembered: longer than any change still announced.
const seenRetention = 2 * FrameworkHorizon

// batchOf returns the DescriptionBatch window t falls in.
func batchOf(t time.Time) time.Time { return t.UTC().Truncate(DescriptionBatch) }

// batchReady returns when the batch of window b may be announced.
func batchReady(b time.Time) time.Time { return b.Add(DescriptionBatch + batchSettle) }

// announceChannels publishes the announcements of recently added and
// removed channels not yet in the log; the caller holds syncMu and has
// read the log to its end.
func (p *Pull) announceChannels(ctx context.Context) error {
	if p.publisher() == nil {
		return nil
	}
	list, gen, err := p.listing(ctx, false)
	if err != nil {
		return fmt.Errorf("pull: channel announcements: %w", err)
	}
	now := p.now()
	p.mu.Lock()
	p.idx.fw.pruneLocked(now)
	fw := &p.idx.fw
	if gen == fw.announced && (fw.nextBatch.IsZero() || now.Before(fw.nextBatch)) {
		// this list was gone through, and everything it called for up to
		// now is in the log: only a new list or a batch falling due can
		// call for more (and Syncs, one per append, must not each cost a
		// pass over every channel)
		p.mu.Unlock()
		return nil
	}
	list = publicOnly(list) // a private channel is never announced (private.go)
	removed := fw.noteListingLocked(list, now)
	p.mu.Unlock()
	next := time.Time{} // the earliest batch not due yet
	due := func(b time.Time) bool {
		if r := batchReady(b); now.Before(r) {
			if next.IsZero() || r.Before(next) {
				next = r
			}
			return false
		}
		return true
	}
	additions, err := p.announceOwnAdditions(ctx, list, now)
	if err != nil {
		return err
	}
	for b, batch := range additions {
		if !due(b) {
			continue
		}
		if err := p.announceAddedBatch(ctx, list, batch); err != nil {
			return err
		}
	}
	removals := map[time.Time][]removal{}
	for _, r := range removed {
		removals[batchOf(r.noticed)] = append(removals[batchOf(r.noticed)], r)
	}
	for b, batch := range removals {
		if !due(b) {
			continue
		}
		if err := p.announceRemovedBatch(ctx, list, b, batch); err != nil {
			return err
		}
	}
	p.mu.Lock()
	fw.announced, fw.nextBatch = gen, next
	p.mu.Unlock()
	return nil
}

// announceOwnAdditions announces, on each recently added channel's own
// framework channel, its Capability List created, and returns the
// additions still to announce on the other channels, by batch.
func (p *Pull) announceOwnAdditions(ctx context.Context, list []hub.Channel, now time.Time) (map[time.Time][]hub.Channel, error) {
	out := map[time.Time][]hub.Channel{}
	for _, added := range list {
		if _, fw := wire.FrameworkParent(added.Name); fw || added.Created.IsZero() || now.Sub(added.Created) > FrameworkHorizon {
			continue
		}
		id := additionID(added)
		p.mu.RLock()
		_, done := p.idx.fw.added[id]
		_, own := p.idx.fw.ownAdded[id]
		p.mu.RUnlock()
		if done {
			continue
		}
		if !own {
			when := changefeed.NewDateTime(added.Created.UTC())
			if err := p.announce(ctx, added.Name, []fwChange{
				{p.capabilityURL(added.Name), changefeed.CapCapabilityList, changefeed.Created, when},
				{p.descriptionURL(), changefeed.CapDescription, changefeed.Updated, when},
			}, ""); err != nil {
				return nil, fmt.Errorf("pull: announcing channel %s added: %w", added.Name, err)
			}
			p.mu.Lock()
			p.idx.fw.noteLocked(&p.idx.fw.ownAdded, id, added.Created)
			p.mu.Unlock()
		}
		b := batchOf(added.Created)
		out[b] = append(out[b], added)
	}
	return out, nil
}

// announceAddedBatch announces the Source Description updated on every
// framework channel of a channel that existed before one of batch's
// channels was added, then marks batch announced.
func (p *Pull) announceAddedBatch(ctx context.Context, list []hub.Channel, batch []hub.Channel) error {
	for _, target := range list {
		var latest time.Time
		for _, added := range batch {
			if added.Name != target.Name && !target.Created.After(added.Created) && added.Created.After(latest) {
				latest = added.Created
			}
		}
		if latest.IsZero() {
			continue // every addition of the batch is the target itself or older than it
		}
		if err := p.announce(ctx, target.Name, []fwChange{
			{p.descriptionURL(), changefeed.CapDescription, changefeed.Updated, changefeed.NewDateTime(latest.UTC())},
		}, ""); err != nil {
			return fmt.Errorf("pull: announcing channels added: %w", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, added := range batch {
		p.idx.fw.noteLocked(&p.idx.fw.added, additionID(added), added.Created)
	}
	return nil
}

// announceRemovedBatch announces batch's channels removed, noticed in the
// window starting at window, on every remaining channel's framework
// channel, then forgets them.
func (p *Pull) announceRemovedBatch(ctx context.Context, list []hub.Channel, window time.Time, batch []removal) error {
	slices.SortFunc(batch, func(a, b removal) int { return strings.Compare(a.ch.Name, b.ch.Name) })
	when := changefeed.NewDateTime(window.Add(DescriptionBatch))
	var changes []fwChange
	var salt strings.Builder // the removed incarnations, which the bodies do not name
	for i, r := range batch {
		if i < maxDeletedEntries {
			changes = append(changes, fwChange{p.capabilityURL(r.ch.Name), changefeed.CapCapabilityList, changefeed.Deleted, when})
		}
		salt.WriteString(additionID(r.ch) + "\x00")
	}
	changes = append(changes, fwChange{p.descriptionURL(), changefeed.CapDescription, changefeed.Updated, when})
	for _, target := range list {
		if err := p.announce(ctx, target.Name, changes, salt.String()); err != nil {
			return fmt.Errorf("pull: announcing channels removed: %w", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range batch {
		delete(p.idx.fw.removed, r.ch.Name)
	}
	return nil
}

// additionID names one incarnation of a channel: its name and Created.
func additionID(ch hub.Channel) string {
	return ch.Name + "\x00" + ch.Created.UTC().Format(time.RFC3339Nano)
}

// announce publishes the framework notification of changes on target's
// framework channel (see frameworkNotification) unless the log is known to
// hold its key; a target without a framework channel is skipped.
func (p *Pull) announce(ctx context.Context, target string, changes []fwChange, salt string) error {
	n, ok := p.frameworkNotification(target, changes, salt)
	if !ok {
		return nil
	}
	key := n.Key()
	p.mu.RLock()
	_, done := p.idx.fw.seen[key]
	p.mu.RUnlock()
	if done {
		return nil
	}
	if err := p.publish(ctx, n); err != nil {
		return fmt.Errorf("on %s: %w", n.Topic, err)
	}
	p.mu.Lock()
	p.idx.fw.noteSeenLocked(key, p.now())
	p.mu.Unlock()
	return nil
}

// fwChange is one entry of a framework notification.
type fwChange struct {
	loc    string
	capa   changefeed.Capability
	change changefeed.Change
	when   changefeed.DateTime
}

// frameworkNotification builds the framework notification of changes on
// target's framework channel; its idempotency key is that of its body and
// salt (what the body does not say of the change). It reports false when
// target has no framework channel.
func (p *Pull) frameworkNotification(target string, changes []fwChange, salt string) (hub.FrameworkNotification, bool) {
	topic := hub.FrameworkTopic(p.cfg.HubURL, target)
	_, ok := wire.FrameworkChannel(target)
	if _, isFw := wire.FrameworkParent(target); topic == "" || !ok || isFw {
		return hub.FrameworkNotification{}, false
	}
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: md()}}
	doc.MD.Capability = changefeed.CapFrameworkNotification
	doc.Links = []changefeed.Link{link("up", p.descriptionURL())}
	for _, c := range changes {
		e := changefeed.Entry{Loc: c.loc, MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.Capability, e.MD.Change, e.MD.DateTime = c.capa, c.change, c.when
		doc.Entries = append(doc.Entries, e)
	}
	return p.encodeFramework(doc, topic, target, salt)
}

// noteListingLocked remembers list as the channels known and returns the
// removals still to announce: those noted before, and the channels known
// from the previous listing that list lacks. Removals noticed more than
// FrameworkHorizon ago are dropped, as are those of channels list has
// again (the same incarnation: a removal waits for its batch, and one
// listing may have missed a channel). The caller holds mu.
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
		if ch, back := listed[name]; (back && ch.Created.Equal(r.ch.Created)) || now.Sub(r.noticed) > FrameworkHorizon {
			// listed again, the same channel: it was missing from one
			// listing only; or too old to announce
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
	for _, m := range []map[string]time.Time{fw.added, fw.ownAdded} {
		for id, created := range m {
			if now.Sub(created) > FrameworkHorizon {
				delete(m, id)
			}
		}
	}
}

// noteLocked records id, created at, in *m; the caller holds mu.
func (fw *frameworkState) noteLocked(m *map[string]time.Time, id string, at time.Time) {
	if *m == nil {
		*m = map[string]time.Time{}
	}
	(*m)[id] = at
}
