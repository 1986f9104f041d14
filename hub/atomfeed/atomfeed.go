// Package atomfeed writes Atom Feed Documents (RFC 4287) whose entries are
// ResourceSync changes, as wire/atom.go lays them out: the one entry
// mapping shared by the hub's Atom-PMH feed documents (hub/pull) and the
// Atom documents the webhook engine pushes to subscribers of a feed URL
// (delivery). It imports only changefeed, wire and the standard library.
package atomfeed

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Feed is what an Atom feed document says besides its entries, and its
// entries.
type Feed struct {
	Name    string // channel name, in the title
	Self    string // rel="self"
	Current string // the subscription document: rel="current" and atom:id
	Hub     string // rel="hub"; "" for none
	Prev    string // rel="prev-archive"; "" for none
	Next    string // rel="next-archive"; "" for none
	Archive bool   // fh:archive
	Updated time.Time
	Topic   string             // the channel's topic URI, in the title
	Entries []changefeed.Entry // in log order; written newest first
}

// atomTime formats t as an RFC 3339 date-time in UTC (RFC 4287 §3.3).
func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Write writes f as an Atom Feed Document: the feed's metadata, then the
// entries newest first. atom:updated is the latest of f.Updated and the
// entries' times.
func Write(w io.Writer, f *Feed) error {
	aw := &writer{w: w}
	updated := f.Updated
	for i := range f.Entries {
		if t := changefeed.EntryTime(f.Entries[i]); t.After(updated) {
			updated = t
		}
	}
	aw.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	aw.raw(`<feed xmlns="` + wire.NSAtom + `" xmlns:fh="` + wire.NSFeedHistory + `" xmlns:rs="` + wire.NSAtomRS + `">` + "\n")
	aw.elem("id", f.Current) // the same in every document of the logical feed
	aw.elem("title", "Changes of "+f.Topic+" (rshub channel "+f.Name+")")
	aw.elem("updated", atomTime(updated))
	aw.raw("<author><name>rshub</name></author>\n")
	aw.elem("generator", "rshub")
	aw.link("self", f.Self, wire.MediaTypeAtom)
	if f.Hub != "" {
		aw.link(wire.RelHub, f.Hub, "")
	}
	aw.link(wire.RelCurrent, f.Current, wire.MediaTypeAtom)
	if f.Prev != "" {
		aw.link(wire.RelPrevArchive, f.Prev, wire.MediaTypeAtom)
	}
	if f.Next != "" {
		aw.link(wire.RelNextArchive, f.Next, wire.MediaTypeAtom)
	}
	if f.Archive {
		aw.raw("<fh:archive/>\n")
	}
	for i := len(f.Entries) - 1; i >= 0 && aw.err == nil; i-- {
		aw.entry(&f.Entries[i])
	}
	aw.raw("</feed>\n")
	if aw.err != nil {
		return fmt.Errorf("atomfeed: write feed: %w", aw.err)
	}
	return nil
}

// writer writes XML text, keeping the first error.
type writer struct {
	w   io.Writer
	buf bytes.Buffer
	err error
}

func (aw *writer) raw(s string) {
	if aw.err == nil {
		_, aw.err = io.WriteString(aw.w, s)
	}
}

func (aw *writer) esc(s string) string {
	aw.buf.Reset()
	_ = xml.EscapeText(&aw.buf, []byte(s))
	return aw.buf.String()
}

func (aw *writer) elem(name, text string) {
	aw.raw("<" + name + ">" + aw.esc(text) + "</" + name + ">\n")
}

func (aw *writer) attr(name, v string) string {
	if v == "" {
		return ""
	}
	return " " + name + `="` + aw.esc(v) + `"`
}

func (aw *writer) link(rel, href, typ string) {
	aw.raw("<link" + aw.attr("rel", rel) + aw.attr("href", href) + aw.attr("type", typ) + "/>\n")
}

// entry writes one change as an Atom entry: a deletion entry (no
// alternate link, an empty atom:content) for a deletion, an active entry
// with an alternate link otherwise, and the ResourceSync metadata as rs:md
// and rs:ln extension elements.
func (aw *writer) entry(e *changefeed.Entry) {
	change := changefeed.Updated
	typ := ""
	if e.MD != nil {
		change, typ = e.MD.Change, e.MD.Type
	}
	aw.raw("<entry>\n")
	aw.elem("id", e.Loc)
	aw.elem("title", string(change)+" "+e.Loc)
	aw.elem("updated", atomTime(changefeed.EntryTime(*e)))
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
