package pull

import (
	"io"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// URLs of the documents, absolute on the base URL (the wire layout).

func (p *Pull) descriptionURL() string { return p.base + wire.PathWellKnown }

func (p *Pull) capabilityURL(name string) string { return p.base + wire.CapabilityListPath(name) }

func (p *Pull) openURL(name string) string { return p.base + wire.ChangeListPath(name) }

func (p *Pull) listURL(name string, seq uint64) string {
	return p.base + wire.ChangeListFilePath(name, seq)
}

func (p *Pull) indexURL(name string) string { return p.base + wire.ChangeListIndexPath(name) }

func (p *Pull) archiveURL(name string) string { return p.base + wire.ChangeListArchivePath(name) }

func (p *Pull) archivePageURL(name string, page int) string {
	return p.base + wire.ChangeListArchivePagePath(name, page)
}

func link(rel, href string) changefeed.Link {
	return changefeed.Link{Rel: rel, Href: href, Length: -1, Pri: -1}
}

func md() changefeed.MD { return changefeed.MD{Length: -1} }

func dt(b changefeed.ListBounds, closed bool) (from, until changefeed.DateTime) {
	from = changefeed.NewDateTime(b.From)
	if closed {
		until = changefeed.NewDateTime(b.Until)
	}
	return from, until
}

// listHeader is the root of Change List l. A closed list links to the
// index and the archive (both exist once a list is closed); the open list
// links to them when they exist.
func (p *Pull) listHeader(name string, l list, hasIndex, hasArchive bool) *changefeed.Header {
	h := &changefeed.Header{Kind: changefeed.URLSet, MD: md()}
	h.MD.Capability = changefeed.CapChangeList
	h.MD.From, h.MD.Until = dt(l.ListBounds, l.Closed)
	h.Links = append(h.Links, link("up", p.capabilityURL(name)))
	if l.Closed || hasIndex {
		h.Links = append(h.Links, link("index", p.indexURL(name)))
	}
	if l.Closed || hasArchive {
		h.Links = append(h.Links, link("archives", p.archiveURL(name)))
	}
	return h
}

// writeIndex writes the Change List Index: the last IndexSize closed lists,
// then the open list, forward chronological.
func (p *Pull) writeIndex(w io.Writer, name string, closed []list, open list, hasOpen bool) error {
	shown := closed[p.cfg.Listing.IndexStart(len(closed)):]
	h := &changefeed.Header{Kind: changefeed.SitemapIndex, MD: md()}
	h.MD.Capability = changefeed.CapChangeList
	h.Links = append(h.Links, link("up", p.capabilityURL(name)))
	if len(closed) > 0 {
		h.Links = append(h.Links, link("archives", p.archiveURL(name)))
	}
	switch {
	case len(shown) > 0:
		h.MD.From = changefeed.NewDateTime(shown[0].From)
	case hasOpen:
		h.MD.From = changefeed.NewDateTime(open.From)
	}
	enc := changefeed.NewEncoder(w)
	if err := enc.WriteHeader(h); err != nil {
		return err
	}
	all := shown
	if hasOpen {
		all = append(shown[:len(shown):len(shown)], open)
	}
	for _, l := range all {
		e := changefeed.Entry{Loc: p.listURL(name, l.FirstSeq), MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.From, e.MD.Until = dt(l.ListBounds, l.Closed)
		if err := enc.WriteEntry(&e); err != nil {
			return err
		}
	}
	return enc.Close()
}

// writeArchive writes Change List Archive page k (0-based) of the closed
// lists; paged says an archive index groups the pages.
func (p *Pull) writeArchive(w io.Writer, name string, closed []list, k int, paged bool) error {
	lo, hi, _ := p.cfg.Listing.ArchivePage(k, len(closed))
	h := &changefeed.Header{Kind: changefeed.URLSet, MD: md()}
	h.MD.Capability = changefeed.CapChangeListArchive
	h.Links = append(h.Links, link("up", p.capabilityURL(name)))
	if paged {
		h.Links = append(h.Links, link("index", p.archiveURL(name)))
	}
	enc := changefeed.NewEncoder(w)
	if err := enc.WriteHeader(h); err != nil {
		return err
	}
	for _, l := range closed[lo:hi] {
		e := changefeed.Entry{Loc: p.listURL(name, l.FirstSeq), MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.From, e.MD.Until = dt(l.ListBounds, true)
		if err := enc.WriteEntry(&e); err != nil {
			return err
		}
	}
	return enc.Close()
}

// writeArchiveIndex writes the Change List Archive Index over the pages.
func (p *Pull) writeArchiveIndex(w io.Writer, name string, closed []list) error {
	h := &changefeed.Header{Kind: changefeed.SitemapIndex, MD: md()}
	h.MD.Capability = changefeed.CapChangeListArchive
	h.Links = append(h.Links, link("up", p.capabilityURL(name)))
	enc := changefeed.NewEncoder(w)
	if err := enc.WriteHeader(h); err != nil {
		return err
	}
	pages := p.cfg.Listing.ArchivePages(len(closed))
	for k := range pages {
		lo, hi, _ := p.cfg.Listing.ArchivePage(k, len(closed))
		e := changefeed.Entry{Loc: p.archivePageURL(name, k+1), MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.From = changefeed.NewDateTime(closed[lo].From)
		e.MD.Until = changefeed.NewDateTime(closed[hi-1].Until)
		if err := enc.WriteEntry(&e); err != nil {
			return err
		}
	}
	return enc.Close()
}

// writeCapabilityList writes channel ch's Capability List.
func (p *Pull) writeCapabilityList(w io.Writer, ch hub.Channel, closed []list, hasOpen bool) error {
	h := &changefeed.Header{Kind: changefeed.URLSet, MD: md()}
	h.MD.Capability = changefeed.CapCapabilityList
	h.Links = append(h.Links, link("up", p.descriptionURL()))
	if ch.DescribedBy != "" {
		h.Links = append(h.Links, link("describedby", ch.DescribedBy))
	}
	h.Links = append(h.Links, p.feedLink(ch.Name))
	enc := changefeed.NewEncoder(w)
	if err := enc.WriteHeader(h); err != nil {
		return err
	}
	entry := func(loc string, capa changefeed.Capability, links ...changefeed.Link) error {
		e := changefeed.Entry{Loc: loc, MD: new(changefeed.MD), Links: links}
		*e.MD = md()
		e.MD.Capability = capa
		return enc.WriteEntry(&e)
	}
	n := len(closed)
	if hasOpen {
		n++
	}
	var err error
	switch {
	case n > 1 || (n == 1 && !hasOpen):
		err = entry(p.indexURL(ch.Name), changefeed.CapChangeList)
	case hasOpen:
		err = entry(p.openURL(ch.Name), changefeed.CapChangeList)
	}
	if err == nil && len(closed) > 0 {
		err = entry(p.archiveURL(ch.Name), changefeed.CapChangeListArchive)
	}
	if err == nil {
		err = entry(ch.Topic, changefeed.CapChangeNotification, link("hub", p.cfg.HubURL))
	}
	if fw := p.frameworkTopic(ch.Name); err == nil && fw != "" {
		err = entry(fw, changefeed.CapFrameworkNotification, link("hub", p.cfg.HubURL))
	}
	if err != nil {
		return err
	}
	return enc.Close()
}

// writeDescription writes the Source Description listing every channel's
// Capability List, each with rs:ln rel="describedby" to the channel's
// dataset description when it has one (and none otherwise: the
// describedby of an entry describes the dataset, never the list itself).
func (p *Pull) writeDescription(w io.Writer, chans []hub.Channel) error {
	h := &changefeed.Header{Kind: changefeed.URLSet, MD: md()}
	h.MD.Capability = changefeed.CapDescription
	enc := changefeed.NewEncoder(w)
	if err := enc.WriteHeader(h); err != nil {
		return err
	}
	for _, ch := range chans {
		e := changefeed.Entry{Loc: p.capabilityURL(ch.Name), MD: new(changefeed.MD)}
		*e.MD = md()
		e.MD.Capability = changefeed.CapCapabilityList
		if ch.DescribedBy != "" {
			e.Links = []changefeed.Link{link("describedby", ch.DescribedBy)}
		}
		e.Links = append(e.Links, p.feedLink(ch.Name))
		if err := enc.WriteEntry(&e); err != nil {
			return err
		}
	}
	return enc.Close()
}

// linkHeader returns the Link header of a document of channel ch: its
// Capability List (rel="resourcesync", ResourceSync §12.2), the document's
// parent up (rel="up", the target of its rs:ln rel="up") and, when the
// channel has one, its dataset description (rel="describedby"), and the
// hub's Mercure face (rel="mercure"), where the channel's topic is a
// Mercure topic.
func (p *Pull) linkHeader(ch hub.Channel, up string) string {
	return wire.FormatLinks(
		wire.Link{Href: p.capabilityURL(ch.Name), Rels: []string{wire.RelResourceSync}},
		wire.Link{Href: up, Rels: []string{wire.RelUp}},
		wire.Link{Href: ch.DescribedBy, Rels: []string{wire.RelDescribedBy}},
		wire.Link{Href: p.base + wire.PathMercure, Rels: []string{wire.RelMercure}},
	)
}
