package pull

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
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

// feedDoc is what an Atom feed document says besides its entries.
type feedDoc struct {
	name    string
	self    string
	current string // the subscription document, also the feed's atom:id
	hub     string // subscription document only
	prev    string // prev-archive, "" for none
	next    string // next-archive, "" for none
	archive bool   // fh:archive
	updated time.Time
	topic   string
	entries []changefeed.Entry // in log order; written newest first
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

// entryTime is when an entry's change happened: its rs:md datetime, else
// its lastmod (every Change List entry has one).
func entryTime(e *changefeed.Entry) time.Time {
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		return e.MD.DateTime.Time
	}
	return e.LastMod.Time
}

// atomTime formats t as an RFC 3339 date-time in UTC (RFC 4287 §3.3).
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// writeFeed writes an Atom Feed Document: the feed's metadata, then the
// entries newest first.
func writeFeed(w io.Writer, f *feedDoc) error {
	aw := &atomWriter{w: w}
	updated := f.updated
	for i := range f.entries {
		if t := entryTime(&f.entries[i]); t.After(updated) {
			updated = t
		}
	}
	aw.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	aw.raw(`<feed xmlns="` + wire.NSAtom + `" xmlns:fh="` + wire.NSFeedHistory + `" xmlns:rs="` + wire.NSAtomRS + `">` + "\n")
	aw.elem("id", f.current) // the same in every document of the logical feed
	aw.elem("title", "Changes of "+f.topic+" (rshub channel "+f.name+")")
	aw.elem("updated", atomTime(updated))
	aw.raw("<author><name>rshub</name></author>\n")
	aw.elem("generator", "rshub")
	aw.link("self", f.self, wire.MediaTypeAtom)
	if f.hub != "" {
		aw.link(wire.RelHub, f.hub, "")
	}
	aw.link(wire.RelCurrent, f.current, wire.MediaTypeAtom)
	if f.prev != "" {
		aw.link(wire.RelPrevArchive, f.prev, wire.MediaTypeAtom)
	}
	if f.next != "" {
		aw.link(wire.RelNextArchive, f.next, wire.MediaTypeAtom)
	}
	if f.archive {
		aw.raw("<fh:archive/>\n")
	}
	for i := len(f.entries) - 1; i >= 0 && aw.err == nil; i-- {
		aw.entry(&f.entries[i])
	}
	aw.raw("</feed>\n")
	if aw.err != nil {
		return fmt.Errorf("pull: write feed: %w", aw.err)
	}
	return nil
}

// atomWriter writes XML text, keeping the first error.
type atomWriter struct {
	w   io.Writer
	buf bytes.Buffer
	err error
}

func (aw *atomWriter) raw(s string) {
	if aw.err == nil {
		_, aw.err = io.WriteString(aw.w, s)
	}
}

func (aw *atomWriter) esc(s string) string {
	aw.buf.Reset()
	_ = xml.EscapeText(&aw.buf, []byte(s))
	return aw.buf.String()
}

func (aw *atomWriter) elem(name, text string) {
	aw.raw("<" + name + ">" + aw.esc(text) + "</" + name + ">\n")
}

func (aw *atomWriter) attr(name, v string) string {
	if v == "" {
		return ""
	}
	return " " + name + `="` + aw.esc(v) + `"`
}

func (aw *atomWriter) link(rel, href, typ string) {
	aw.raw("<link" + aw.attr("rel", rel) + aw.attr("href", href) + aw.attr("type", typ) + "/>\n")
}

// entry writes one change as an Atom entry: a deletion entry (no
// alternate link, an empty atom:content) for a deletion, an active entry
// with an alternate link otherwise, and the ResourceSync metadata as rs:md
// and rs:ln extension elements.
func (aw *atomWriter) entry(e *changefeed.Entry) {
	change := changefeed.Updated
	typ := ""
	if e.MD != nil {
		change, typ = e.MD.Change, e.MD.Type
	}
	aw.raw("<entry>\n")
	aw.elem("id", e.Loc)
	aw.elem("title", string(change)+" "+e.Loc)
	aw.elem("updated", atomTime(entryTime(e)))
	if change == changefeed.Deleted {
		aw.raw("<content/>\n")
	} else {
		aw.link(wire.RelAlternate, e.Loc, typ)
	}
	md := aw.attr("change", string(change))
	if !e.LastMod.IsZero() {
		md += aw.attr("lastmod", e.LastMod.Raw)
	}
	if e.MD != nil {
		md += aw.attr("datetime", e.MD.DateTime.Raw) + aw.attr("hash", e.MD.Hash) + aw.attr("type", e.MD.Type) +
			aw.attr("encoding", e.MD.Encoding) + aw.attr("path", e.MD.Path)
		if e.MD.Length >= 0 {
			md += aw.attr("length", strconv.FormatInt(e.MD.Length, 10))
		}
	}
	aw.raw("<rs:md" + md + "/>\n")
	for _, l := range e.Links {
		ln := aw.attr("rel", l.Rel) + aw.attr("href", l.Href) + aw.attr("modified", l.Modified.Raw) +
			aw.attr("hash", l.Hash) + aw.attr("type", l.Type) + aw.attr("encoding", l.Encoding) + aw.attr("path", l.Path)
		if l.Length >= 0 {
			ln += aw.attr("length", strconv.FormatInt(l.Length, 10))
		}
		if l.Pri > 0 {
			ln += aw.attr("pri", strconv.Itoa(l.Pri))
		}
		aw.raw("<rs:ln" + ln + "/>\n")
	}
	aw.raw("</entry>\n")
}

// subscriptionFeed describes channel ch's subscription document: the open
// list's entries (none when it has no open list), prev-archive to the
// newest archive.
func (p *Pull) subscriptionFeed(ch hub.Channel, closed []list, open list, hasOpen bool) *feedDoc {
	f := &feedDoc{name: ch.Name, self: p.feedURL(ch.Name), current: p.feedURL(ch.Name), hub: p.cfg.HubURL, topic: ch.Topic, updated: ch.Created}
	if n := len(closed); n > 0 {
		f.prev = p.feedArchiveURL(ch.Name, closed[n-1].FirstSeq)
		f.updated = closed[n-1].Until
	}
	if hasOpen {
		f.updated = later(f.updated, open.From, open.Until)
	}
	if f.updated.IsZero() {
		f.updated = time.Unix(0, 0)
	}
	return f
}

// archiveFeed describes the archive document of closed[k].
func (p *Pull) archiveFeed(ch hub.Channel, closed []list, k int) *feedDoc {
	l := closed[k]
	f := &feedDoc{name: ch.Name, self: p.feedArchiveURL(ch.Name, l.FirstSeq), current: p.feedURL(ch.Name),
		topic: ch.Topic, archive: true, updated: l.Until}
	if k > 0 {
		f.prev = p.feedArchiveURL(ch.Name, closed[k-1].FirstSeq)
	}
	if k+1 < len(closed) {
		f.next = p.feedArchiveURL(ch.Name, closed[k+1].FirstSeq)
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
