package pull

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/atomfeed"
	"github.com/rshub/rshub/wire"
)

// registerAtom adds the Atom-PMH feed routes to mux.
func (p *Pull) registerAtom(mux *http.ServeMux) {
	mux.HandleFunc("GET "+wire.PatternFeed, p.serveFeed)
	mux.HandleFunc("GET "+wire.PatternFeedArchive, p.serveFeedArchive)
}

// feedLinkHeader is the Link header of a feed document: the channel's
// Capability List, up to it, and the hub and self for the subscription
// document, so a WebSub subscriber discovers the hub from a HEAD.
func (p *Pull) feedLinkHeader(ch hub.Channel, self string, withHub bool) string {
	v := p.linkHeader(ch, p.capabilityURL(ch.Name))
	if withHub {
		v += ", " + wire.FormatLinks(
			wire.Link{Href: p.cfg.HubURL, Rels: []string{wire.RelHub}},
			wire.Link{Href: self, Rels: []string{wire.RelSelf}},
		)
	}
	return v
}

// serveFeed serves a channel's Atom subscription document: the open
// Change List's entries, newest first, linked to the newest archive.
func (p *Pull) serveFeed(w http.ResponseWriter, r *http.Request) {
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	ctx := r.Context()
	closed, open, hasOpen := p.snapshot(ch.Name)
	var lastClosed uint64
	if len(closed) > 0 {
		lastClosed = closed[len(closed)-1].FirstSeq
	}
	f := p.subscriptionFeed(ch, closed, open, hasOpen)
	d := doc{
		etag:     tag("feed", p.cfgTag(), ch.Name, ch.Topic, ch.Created, lastClosed, hasOpen, open.FirstSeq, open.LastSeq),
		modified: latest(closed, open, hasOpen),
		cache:    shortLived,
		ctype:    wire.MediaTypeAtom,
		link:     p.feedLinkHeader(ch, f.Self, true),
		gone:     func() { p.forget(open.FirstSeq) },
	}
	d.write = func(out io.Writer) error {
		if hasOpen {
			es, err := p.listEntries(ctx, ch.Name, open)
			if err != nil {
				return err
			}
			f.Entries = es
		}
		return atomfeed.Write(out, f)
	}
	if p.cache.enabled() {
		key := d.etag
		d.gone = func() { p.forget(open.FirstSeq); p.cache.drop(key) }
		d.stored = func() (*rendered, error) {
			return p.cache.get(ctx, key, func() (*rendered, error) {
				return p.renderDoc(d.write)
			})
		}
	}
	p.serve(w, r, d)
}

// serveFeedArchive serves the Atom archive document of a closed Change
// List. It is immutable once a newer archive exists (its next-archive
// link is then fixed); the newest archive is short-lived until then.
func (p *Pull) serveFeedArchive(w http.ResponseWriter, r *http.Request) {
	seq, ok := wire.ParseListFile(r.PathValue("file"))
	if !ok {
		p.refuse(w, hub.ReasonNoDocument, "no such feed archive")
		return
	}
	ch, ok := p.lookup(w, r, true)
	if !ok {
		return
	}
	ctx := r.Context()
	closed, _, _ := p.snapshot(ch.Name)
	k := -1
	for i := range closed { // closed is short: one item per closed list
		if closed[i].FirstSeq == seq {
			k = i
			break
		}
	}
	if k < 0 {
		p.refuse(w, hub.ReasonNoDocument, "no such feed archive")
		return
	}
	l := closed[k]
	f := p.archiveFeed(ch, closed, k)
	d := doc{
		etag:     tag("feed-archive", p.cfgTag(), ch.Name, ch.Topic, l.FirstSeq, l.LastSeq, f.Prev, f.Next),
		modified: l.Modified,
		cache:    shortLived,
		ctype:    wire.MediaTypeAtom,
		link:     p.feedLinkHeader(ch, f.Self, false),
		write: func(out io.Writer) error {
			es, err := p.listEntries(ctx, ch.Name, l)
			if err != nil {
				return err
			}
			f.Entries = es
			return atomfeed.Write(out, f)
		},
	}
	if f.Next != "" {
		d.cache = immutable
	}
	key := d.etag
	d.gone = func() { p.forget(l.FirstSeq); p.cache.drop(key) }
	if p.cache.enabled() {
		d.stored = func() (*rendered, error) {
			return p.cache.get(ctx, key, func() (*rendered, error) {
				return p.renderDoc(d.write)
			})
		}
	}
	p.serve(w, r, d)
}

// renderDoc renders a document with write into compressed bytes, with a
// pooled compressor (one is large: allocating it per rendering dominated
// the cost of rendering small lists).
func (p *Pull) renderDoc(write func(io.Writer) error) (*rendered, error) {
	var buf bytes.Buffer
	zw := p.gz.Get().(*gzip.Writer)
	defer p.gz.Put(zw)
	zw.Reset(&buf)
	cw := &countWriter{w: zw}
	if err := write(cw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &rendered{gz: bytes.Clone(buf.Bytes()), size: cw.n}, nil
}
