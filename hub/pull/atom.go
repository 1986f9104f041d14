package pull

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/atomfeed"
	"github.com/rshub/rshub/wire"
)

// Atom-PMH archived feeds (see wire/atom.go for the layout): the
// subscription document carries the entries of the open Change List, and
// each closed Change List has one archive document with the same entries.
// Entries come from the Change Lists as the pull package writes them
// (writeList, or the rendered closed list from the cache), so the feed and
// the Change Lists are one history read the same way.

func (p *Pull) feedURL(name string) string { return p.base + wire.FeedPath(name) }

func (p *Pull) feedArchiveURL(name string, seq uint64) string {
	return p.base + wire.FeedArchivePath(name, seq)
}

// listEntries returns the entries of Change List l of channel name, in log
// order: a closed list from its cached rendering, the open list read from
// the log.
func (p *Pull) listEntries(ctx context.Context, name string, l list) ([]changefeed.Entry, error) {
	var r io.Reader
	if l.Closed {
		rd, err := p.renderClosed(ctx, name, l)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(rd.gz))
		if err != nil {
			return nil, fmt.Errorf("pull: feed: read rendered list: %w", err)
		}
		r = zr
	} else {
		var buf bytes.Buffer
		if err := p.writeList(ctx, &buf, name, l, p.listHeader(name, l, false, false)); err != nil {
			return nil, err
		}
		r = &buf
	}
	d := changefeed.NewDecoder(r, changefeed.Options{Mode: changefeed.Lenient})
	if _, err := d.Header(); err != nil {
		return nil, fmt.Errorf("pull: feed: read list header: %w", err)
	}
	out := make([]changefeed.Entry, 0, l.Entries)
	for {
		e, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("pull: feed: read list entry %d: %w", len(out), err)
		}
		out = append(out, *e)
	}
}

// subscriptionFeed describes channel ch's subscription document: the open
// list's entries (none when it has no open list), prev-archive to the
// newest archive.
func (p *Pull) subscriptionFeed(ch hub.Channel, closed []list, open list, hasOpen bool) *atomfeed.Feed {
	f := &atomfeed.Feed{Name: ch.Name, Self: p.feedURL(ch.Name), Current: p.feedURL(ch.Name), Hub: p.cfg.HubURL, Topic: ch.Topic, Updated: ch.Created}
	if n := len(closed); n > 0 {
		f.Prev = p.feedArchiveURL(ch.Name, closed[n-1].FirstSeq)
		f.Updated = closed[n-1].Until
	}
	if hasOpen {
		f.Updated = later(f.Updated, open.From, open.Until)
	}
	if f.Updated.IsZero() {
		f.Updated = time.Unix(0, 0)
	}
	return f
}

// archiveFeed describes the archive document of closed[k].
func (p *Pull) archiveFeed(ch hub.Channel, closed []list, k int) *atomfeed.Feed {
	l := closed[k]
	f := &atomfeed.Feed{Name: ch.Name, Self: p.feedArchiveURL(ch.Name, l.FirstSeq), Current: p.feedURL(ch.Name),
		Topic: ch.Topic, Archive: true, Updated: l.Until}
	if k > 0 {
		f.Prev = p.feedArchiveURL(ch.Name, closed[k-1].FirstSeq)
	}
	if k+1 < len(closed) {
		f.Next = p.feedArchiveURL(ch.Name, closed[k+1].FirstSeq)
	}
	return f
}

// later returns the latest of ts.
func later(ts ...time.Time) (t time.Time) {
	for _, x := range ts {
		if x.After(t) {
			t = x
		}
	}
	return t
}

// feedLink is the rs:ln that advertises channel name's Atom feed in its
// Capability List and in the Source Description's entry for it.
func (p *Pull) feedLink(name string) changefeed.Link {
	l := link(wire.RelAlternate, p.feedURL(name))
	l.Type = wire.MediaTypeAtom
	return l
}
