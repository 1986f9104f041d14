package pull

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Framework notifications (RSF-1 … RSF-6) the hub sends about its own
// capability documents, on each channel's framework channel
// (wire.FrameworkChannel, hosted by the hub at hub.FrameworkTopic).
//
// When a Change List closes (the notification that opens the next one
// arrives), the framework channel gets one notification combining
// (RSF-6): the closed list updated, the new open list created (both with
// rs:ln rel="index" to the Change List Index), the Change List Archive, or
// its current page under the Archive Index, created or updated, and, at a
// channel's first closed list, its Capability List updated (its changelist
// entry then names the index and it gains the archive). Every entry has a
// datetime (RSF-3), a function of the lists only: the closed list's until
// for what its closing changed, the new list's from for its creation.
//
// The notification is a function of the log: its bytes, hence its
// idempotency key (hub.FrameworkNotification.Key), depend only on the
// list's identity. Sync notes each rotation it reads as pending and each
// framework record it reads as done; once it has read to the log's end it
// publishes what is still pending through the hub's intake (Publisher),
// telling it how far it read. A hub that restarts reads the rotation and
// then the record that announced it, so nothing is sent twice; a rotation
// that no process announced before it stopped is announced by the next;
// two processes that race store one record, intake finding the key after
// where the later one read (hub.Hub.PublishFramework). Rotations caused by
// a record received more than FrameworkHorizon before the process read it
// are history (a log older than the feature) and are not announced.

// FrameworkHorizon is how old a rotation may be and still be announced.
const FrameworkHorizon = time.Hour

// Publisher stores the framework notifications a Pull composes through
// the hub's intake, the one writer of the log; *hub.Hub implements it.
type Publisher interface {
	PublishFramework(ctx context.Context, n hub.FrameworkNotification) (hub.PublishResult, error)
}

// fwEvent is a framework notification waiting to be published.
type fwEvent struct {
	seq uint64 // the record that caused it
	n   hub.FrameworkNotification
}

// frameworkState is what the index keeps for framework notifications.
type frameworkState struct {
	pub     Publisher              // nil: framework notifications are off
	pending map[string]fwEvent     // by idempotency key
	seen    map[string]time.Time   // keys of the framework records read in the log, when received (framework_channels.go)
	pruned  time.Time              // when seen was last pruned
	known   map[string]hub.Channel // the channels of the last listing read
	removed map[string]removal     // channels gone from the listing, not yet announced
	added   map[string]time.Time   // channels whose addition is in the log: their Created, by name and Created
	// ownAdded are the channels whose addition is in the log on their own
	// framework channel, by name and Created; on the other channels it
	// waits for its batch (added).
	ownAdded map[string]time.Time
	// announced is the generation of the channel list (Pull.listing)
	// whose additions and removals are all in the log but for batches not
	// due before nextBatch (zero: none); 0: none yet.
	announced uint64
	nextBatch time.Time
}

// EnableFramework makes the Pull announce Change List rotations, and
// channels added and removed, on each channel's framework channel,
// publishing through pub. Call it before Run.
func (p *Pull) EnableFramework(pub Publisher) {
	p.mu.Lock()
	p.idx.fw.pub = pub
	p.mu.Unlock()
}

// frameworkRecordLocked notes a record of a framework channel: it
// announces what was pending under its key. It reports whether rec belongs
// to a framework channel (which has no Change Lists). The caller holds mu.
func (p *Pull) frameworkRecordLocked(rec wire.Record) bool {
	if _, ok := wire.FrameworkParent(rec.Channel); !ok {
		return false
	}
	delete(p.idx.fw.pending, rec.Key)
	p.idx.fw.noteSeenLocked(rec.Key, rec.Received)
	p.idx.cursor = max(p.idx.cursor, rec.Seq)
	return true
}

// rotationLocked notes the framework notification due when applying rec
// closed a list of its channel (closedBefore is the number of closed lists
// before). The caller holds mu.
func (p *Pull) rotationLocked(rec wire.Record, closedBefore int) {
	fw := &p.idx.fw
	c := p.idx.chans[rec.Channel]
	if fw.pub == nil || c == nil || len(c.closed) <= closedBefore ||
		(!rec.Received.IsZero() && time.Since(rec.Received) > FrameworkHorizon) {
		return
	}
	n, ok := p.rotationNotification(rec.Channel, c.closed, c)
	if !ok {
		return
	}
	if fw.pending == nil {
		fw.pending = map[string]fwEvent{}
	}
	fw.pending[n.Key()] = fwEvent{seq: rec.Seq, n: n}
}

// rotationNotification builds the framework notification of the last
// list of closed having just closed.
func (p *Pull) rotationNotification(name string, closed []list, c *chanLists) (hub.FrameworkNotification, bool) {
	topic := hub.FrameworkTopic(p.cfg.HubURL, name)
	if _, ok := wire.FrameworkChannel(name); topic == "" || !ok {
		return hub.FrameworkNotification{}, false
	}
	l := closed[len(closed)-1]
	until := changefeed.NewDateTime(l.Until)
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: md()}}
	doc.MD.Capability = changefeed.CapFrameworkNotification
	doc.Links = []changefeed.Link{link("up", p.capabilityURL(name))}
	add := func(loc string, capa changefeed.Capability, change changefeed.Change, when changefeed.DateTime, links ...changefeed.Link) {
		e := changefeed.Entry{Loc: loc, MD: new(changefeed.MD), Links: links}
		*e.MD = md()
		e.MD.Capability, e.MD.Change, e.MD.DateTime = capa, change, when
		doc.Entries = append(doc.Entries, e)
	}
	index := link("index", p.indexURL(name))
	add(p.listURL(name, l.FirstSeq), changefeed.CapChangeList, changefeed.Updated, until, index)
	change := changefeed.Updated
	if pages := p.cfg.Listing.ArchivePages(len(closed)); pages > 1 {
		if lo, _, _ := p.cfg.Listing.ArchivePage(pages-1, len(closed)); lo == len(closed)-1 {
			change = changefeed.Created
		}
		add(p.archivePageURL(name, pages), changefeed.CapChangeListArchive, change, until, link("index", p.archiveURL(name)))
	} else {
		if len(closed) == 1 {
			change = changefeed.Created
		}
		add(p.archiveURL(name), changefeed.CapChangeListArchive, change, until)
	}
	if len(closed) == 1 {
		add(p.capabilityURL(name), changefeed.CapCapabilityList, changefeed.Updated, until)
	}
	if open, ok := c.open(); ok {
		opened := until // the open list starts where the closed one ends
		if !open.From.IsZero() {
			opened = changefeed.NewDateTime(open.From)
		}
		add(p.listURL(name, open.FirstSeq), changefeed.CapChangeList, changefeed.Created, opened, index)
	}
	return p.encodeFramework(doc, topic, name, "")
}

// encodeFramework encodes doc as the framework notification of
// channel name on topic; salt is what the body does not say of the change.
func (p *Pull) encodeFramework(doc *changefeed.Document, topic, name, salt string) (hub.FrameworkNotification, bool) {
	var b bytes.Buffer
	if err := changefeed.Encode(&b, doc); err != nil {
		p.logger.Warn("framework notification not built", "channel", name, "err", err)
		return hub.FrameworkNotification{}, false
	}
	return hub.FrameworkNotification{
		Topic:        topic,
		ResourceSync: p.capabilityURL(name),
		Entries:      len(doc.Entries),
		Body:         b.Bytes(),
		Salt:         salt,
	}, true
}

// emitFramework publishes the pending framework notifications, oldest
// cause first; the caller holds syncMu and has read the log to its end.
// One that fails stays pending for the next Sync.
func (p *Pull) emitFramework(ctx context.Context) error {
	p.mu.Lock()
	var due []fwEvent
	for _, ev := range p.idx.fw.pending {
		due = append(due, ev)
	}
	p.mu.Unlock()
	sortEvents(due)
	for _, ev := range due {
		key := ev.n.Key()
		if err := p.publish(ctx, ev.n); err != nil {
			return fmt.Errorf("pull: framework notification on %s: %w", ev.n.Topic, err)
		}
		p.mu.Lock()
		delete(p.idx.fw.pending, key)
		p.mu.Unlock()
	}
	return p.announceChannels(ctx)
}

// sortEvents orders events by the sequence of their cause.
func sortEvents(evs []fwEvent) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].seq < evs[j-1].seq; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

// closedCountLocked returns how many closed lists channel name has; the
// caller holds mu.
func (p *Pull) closedCountLocked(name string) int {
	if c := p.idx.chans[name]; c != nil {
		return len(c.closed)
	}
	return 0
}

// frameworkTopic returns the topic URI of channel name's framework channel
// when the Pull announces on them (its Capability List then advertises it,
// RSF-1), else "".
func (p *Pull) frameworkTopic(name string) string {
	if p.publisher() == nil {
		return ""
	}
	return hub.FrameworkTopic(p.cfg.HubURL, name)
}

// publisher returns the Publisher of framework notifications, nil when
// they are off.
func (p *Pull) publisher() Publisher {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.idx.fw.pub
}

// publish stores n through the Publisher, telling it how far the index
// has read the log; a notification whose channel is gone meanwhile (the
// hub answers 404) is dropped.
func (p *Pull) publish(ctx context.Context, n hub.FrameworkNotification) error {
	n.After = p.applied()
	_, err := p.publisher().PublishFramework(ctx, n)
	var pe *hub.PublishError
	if errors.As(err, &pe) && pe.Status == http.StatusNotFound {
		p.logger.Debug("framework notification dropped: its channel is gone", "topic", n.Topic)
		return nil
	}
	return err
}
