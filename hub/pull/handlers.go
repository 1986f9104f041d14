package pull

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// cfgTag identifies the configuration every link depends on.
func (p *Pull) cfgTag() string { return p.base + "\x00" + p.cfg.HubURL }

// lookup resolves {name} to a known channel and catches up with the log
// when sync is set. It answers the request itself and returns false when
// the channel is unknown or the log cannot be read.
func (p *Pull) lookup(w http.ResponseWriter, r *http.Request, sync bool) (hub.Channel, bool) {
	ch, ok, err := p.channel(r.Context(), r.PathValue("name"))
	if err != nil { // logged by the health, once per outage
		p.unavailable(w, "channels cannot be listed right now")
		return hub.Channel{}, false
	}
	if !p.admit(w, r, ch, ok) {
		return hub.Channel{}, false
	}
	if sync {
		if err := p.Sync(r.Context()); err != nil { // logged by the health, once per outage
			p.unavailable(w, "the log cannot be read right now")
			return hub.Channel{}, false
		}
	}
	return ch, true
}

// serveDescription serves the Source Description.
func (p *Pull) serveDescription(w http.ResponseWriter, r *http.Request) {
	chans, err := p.channels(r.Context(), false)
	if err != nil { // logged by the health, once per outage
		p.unavailable(w, "channels cannot be listed right now")
		return
	}
	chans = p.visible(w, r, chans)
	parts := []any{"description", p.cfgTag()}
	for _, ch := range chans {
		parts = append(parts, ch.Name, ch.DescribedBy)
	}
	p.serve(w, r, doc{
		etag:  tag(parts...),
		cache: shortLived,
		write: func(out io.Writer) error { return p.writeDescription(out, chans) },
	})
}

// serveCapabilityList serves a channel's Capability List.
func (p *Pull) serveCapabilityList(w http.ResponseWriter, r *http.Request) {
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	closed, open, hasOpen := p.snapshot(ch.Name)
	p.serve(w, r, doc{
		etag:     tag("capabilitylist", p.cfgTag(), ch.Name, ch.Topic, ch.DescribedBy, len(closed) > 0, hasOpen, len(closed) > 1),
		modified: latest(closed, open, hasOpen),
		cache:    shortLived,
		link:     p.linkHeader(ch, p.descriptionURL()),
		write:    func(out io.Writer) error { return p.writeCapabilityList(out, ch, closed, hasOpen) },
	})
}

// serveOpenList serves the open Change List at its stable alias.
func (p *Pull) serveOpenList(w http.ResponseWriter, r *http.Request) {
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	closed, open, hasOpen := p.snapshot(ch.Name)
	if !hasOpen {
		p.refuse(w, hub.ReasonNoDocument, "the channel has no open Change List")
		return
	}
	p.serveListDoc(w, r, ch, open, len(closed) > 0)
}

// serveList serves the Change List named by the sequence of its first
// notification, open or closed.
func (p *Pull) serveList(w http.ResponseWriter, r *http.Request) {
	seq, ok := wire.ParseListFile(r.PathValue("file"))
	if !ok {
		if redirectLegacy(w, r) {
			return
		}
		p.refuse(w, hub.ReasonNoDocument, "no such Change List")
		return
	}
	ch, ok := p.lookup(w, r, false)
	if !ok {
		return
	}
	// a closed list never changes: no need to read the log first, only to
	// check that retention has not removed it
	if first, _, err := p.log.Bounds(r.Context()); err == nil {
		p.mu.Lock()
		p.idx.prune(first)
		p.mu.Unlock()
	}
	l, found := p.find(ch.Name, seq)
	if !found || !l.Closed {
		if _, ok := p.lookup(w, r, true); !ok {
			return
		}
		l, found = p.find(ch.Name, seq)
	}
	if !found {
		p.refuse(w, hub.ReasonNoDocument, "no such Change List")
		return
	}
	closed, _, _ := p.snapshot(ch.Name)
	p.serveListDoc(w, r, ch, l, len(closed) > 0)
}

// serveListDoc serves Change List l of channel ch.
func (p *Pull) serveListDoc(w http.ResponseWriter, r *http.Request, ch hub.Channel, l list, hasArchive bool) {
	ctx := r.Context()
	name := ch.Name
	hasIndex := l.Closed || hasArchive
	hdr := p.listHeader(name, l, hasIndex, hasArchive)
	d := doc{
		etag:     tag("changelist", p.cfgTag(), name, l.FirstSeq, l.LastSeq, l.Closed, hasIndex, hasArchive),
		modified: l.Modified,
		cache:    shortLived,
		link:     p.linkHeader(ch, p.capabilityURL(name)),
		write:    func(out io.Writer) error { return p.writeList(ctx, out, name, l, hdr) },
		gone:     func() { p.forget(l.FirstSeq) },
	}
	if l.Closed {
		d.cache = immutable
		if p.cache.enabled() {
			key := d.etag
			d.gone = func() { p.forget(l.FirstSeq); p.cache.drop(key) }
			d.stored = func() (*rendered, error) { return p.renderClosed(ctx, name, l) }
		}
	} else if p.cache.enabled() {
		// the open list is rendered once per version (its ETag names its
		// last notification); repeated GETs between appends hit the cache
		key := d.etag
		d.gone = func() { p.forget(l.FirstSeq); p.cache.drop(key) }
		d.stored = func() (*rendered, error) {
			return p.cache.get(ctx, key, func() (*rendered, error) {
				return p.render(context.WithoutCancel(ctx), name, l, hdr)
			})
		}
	}
	p.serve(w, r, d)
}

// render renders a closed Change List into compressed bytes.
func (p *Pull) render(ctx context.Context, name string, l list, hdr *changefeed.Header) (*rendered, error) {
	return p.renderDoc(func(w io.Writer) error { return p.writeList(ctx, w, name, l, hdr) })
}

// serveIndex serves the Change List Index.
func (p *Pull) serveIndex(w http.ResponseWriter, r *http.Request) {
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	closed, open, hasOpen := p.snapshot(ch.Name)
	if len(closed) == 0 && !hasOpen {
		p.refuse(w, hub.ReasonNoDocument, "the channel has no Change List")
		return
	}
	shown := closed[p.cfg.Listing.IndexStart(len(closed)):]
	var firstShown, lastClosed uint64
	if len(shown) > 0 {
		firstShown, lastClosed = shown[0].FirstSeq, shown[len(shown)-1].LastSeq
	}
	p.serve(w, r, doc{
		etag:     tag("index", p.cfgTag(), ch.Name, firstShown, lastClosed, len(shown), hasOpen, open.FirstSeq, open.LastSeq),
		modified: latest(closed, open, hasOpen),
		cache:    shortLived,
		link:     p.linkHeader(ch, p.capabilityURL(ch.Name)),
		write:    func(out io.Writer) error { return p.writeIndex(out, ch.Name, closed, open, hasOpen) },
	})
}

// serveArchive serves the Change List Archive, or the Change List Archive
// Index when the archive has more than one page.
func (p *Pull) serveArchive(w http.ResponseWriter, r *http.Request) {
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	closed, _, _ := p.snapshot(ch.Name)
	pages := p.cfg.Listing.ArchivePages(len(closed))
	if pages == 0 {
		p.refuse(w, hub.ReasonNoDocument, "the channel has no closed Change List yet")
		return
	}
	d := p.archiveDoc(ch, closed, 0, false)
	if pages > 1 {
		d.etag = tag("archive-index", p.cfgTag(), ch.Name, closed[0].FirstSeq, closed[len(closed)-1].FirstSeq, len(closed))
		d.write = func(out io.Writer) error { return p.writeArchiveIndex(out, ch.Name, closed) }
	}
	p.serve(w, r, d)
}

// serveArchivePage serves page k (1-based) of a paged Change List Archive.
func (p *Pull) serveArchivePage(w http.ResponseWriter, r *http.Request) {
	k, ok := wire.ParseListFile(r.PathValue("file"))
	if !ok {
		if redirectLegacy(w, r) {
			return
		}
		p.refuse(w, hub.ReasonNoDocument, "no such archive page")
		return
	}
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	closed, _, _ := p.snapshot(ch.Name)
	pages := p.cfg.Listing.ArchivePages(len(closed))
	if k < 1 || k > uint64(pages) {
		p.refuse(w, hub.ReasonNoDocument, "no such archive page")
		return
	}
	p.serve(w, r, p.archiveDoc(ch, closed, int(k-1), pages > 1))
}

func (p *Pull) archiveDoc(ch hub.Channel, closed []list, k int, paged bool) doc {
	name := ch.Name
	lo, hi, _ := p.cfg.Listing.ArchivePage(k, len(closed))
	return doc{
		etag:     tag("archive", p.cfgTag(), name, k, paged, closed[lo].FirstSeq, closed[hi-1].FirstSeq, hi-lo),
		modified: closed[hi-1].Modified,
		cache:    shortLived,
		link:     p.linkHeader(ch, p.capabilityURL(name)),
		write:    func(out io.Writer) error { return p.writeArchive(out, name, closed, k, paged) },
	}
}

// find returns the served list of channel name starting at seq.
func (p *Pull) find(name string, seq uint64) (list, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	c := p.idx.chans[name]
	if c == nil {
		return list{}, false
	}
	return c.find(seq)
}

// latest returns the last modification among a channel's lists.
func latest(closed []list, open list, hasOpen bool) (t0 time.Time) {
	if hasOpen {
		return open.Modified
	}
	if len(closed) > 0 {
		return closed[len(closed)-1].Modified
	}
	return t0
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// redirectLegacy answers a list or archive page named as hubs before
// zero-padding named them ("42.xml") with 301 to its name now
// ("00000000000000000042.xml"), relative to the request's directory, and
// reports whether it did.
func redirectLegacy(w http.ResponseWriter, r *http.Request) bool {
	n, ok := wire.ParseLegacyListFile(r.PathValue("file"))
	if !ok {
		return false
	}
	w.Header().Set("Location", wire.ListFile(n))
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.WriteHeader(http.StatusMovedPermanently)
	return true
}
