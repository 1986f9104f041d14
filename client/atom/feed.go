package atom

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Feed is an Atom Feed Document, as far as Atom-PMH uses it.
type Feed struct {
	ID       string
	Title    string
	Updated  time.Time
	Links    []Link
	Archive  bool // fh:archive: an archive document
	Complete bool // fh:complete: the document holds the whole pool
	Entries  []Entry
}

// Link is an atom:link.
type Link struct {
	Rel  string // "" means alternate (RFC 4287 §4.2.7.2)
	Href string
	Type string
}

// Entry is an atom:entry, with the ResourceSync metadata an rshub hub
// adds (rs:md) when present.
type Entry struct {
	ID      string
	Title   string
	Updated time.Time
	Links   []Link
	// HasContent says the entry has an atom:content element; ContentSrc
	// and ContentEmpty describe it.
	HasContent   bool
	ContentSrc   string
	ContentEmpty bool
	// Change, Hash, Length (-1 when absent) and Type come from rs:md.
	Change string
	Hash   string
	Length int64
	Type   string
}

// Link returns the href of the feed's first link with relation rel.
func (f *Feed) Link(rel string) string {
	for _, l := range f.Links {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

// Alternates returns the entry's alternate links.
func (e *Entry) Alternates() []Link {
	var out []Link
	for _, l := range e.Links {
		if l.Rel == "" || l.Rel == "alternate" {
			out = append(out, l)
		}
	}
	return out
}

// IsDeletion reports whether e is a deletion entry: no alternate link and
// an empty atom:content without src.
func (e *Entry) IsDeletion() bool {
	return len(e.Alternates()) == 0 && e.HasContent && e.ContentSrc == "" && e.ContentEmpty
}

type xmlFeed struct {
	XMLName  xml.Name   `xml:"http://www.w3.org/2005/Atom feed"`
	ID       string     `xml:"http://www.w3.org/2005/Atom id"`
	Title    string     `xml:"http://www.w3.org/2005/Atom title"`
	Updated  string     `xml:"http://www.w3.org/2005/Atom updated"`
	Links    []xmlLink  `xml:"http://www.w3.org/2005/Atom link"`
	Archive  *struct{}  `xml:"http://purl.org/syndication/history/1.0 archive"`
	Complete *struct{}  `xml:"http://purl.org/syndication/history/1.0 complete"`
	Entries  []xmlEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type xmlLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
	Type string `xml:"type,attr"`
}

type xmlEntry struct {
	ID      string      `xml:"http://www.w3.org/2005/Atom id"`
	Title   string      `xml:"http://www.w3.org/2005/Atom title"`
	Updated string      `xml:"http://www.w3.org/2005/Atom updated"`
	Links   []xmlLink   `xml:"http://www.w3.org/2005/Atom link"`
	Content *xmlContent `xml:"http://www.w3.org/2005/Atom content"`
	MD      *xmlMD      `xml:"http://www.openarchives.org/rs/terms/ md"`
}

type xmlContent struct {
	Src   string `xml:"src,attr"`
	Inner string `xml:",innerxml"`
}

type xmlMD struct {
	Change string `xml:"change,attr"`
	Hash   string `xml:"hash,attr"`
	Length string `xml:"length,attr"`
	Type   string `xml:"type,attr"`
}

// Parse reads an Atom Feed Document. It requires what Atom-PMH relies on:
// atom:updated on the feed and on every entry, atom:id on every entry.
func Parse(r io.Reader) (*Feed, error) {
	var x xmlFeed
	if err := xml.NewDecoder(r).Decode(&x); err != nil {
		return nil, fmt.Errorf("atom: parse feed: %w", err)
	}
	f := &Feed{ID: strings.TrimSpace(x.ID), Title: x.Title, Archive: x.Archive != nil, Complete: x.Complete != nil}
	var err error
	if f.Updated, err = parseTime(x.Updated); err != nil {
		return nil, fmt.Errorf("atom: feed updated: %w", err)
	}
	f.Links = links(x.Links)
	f.Entries = make([]Entry, 0, len(x.Entries))
	for i, xe := range x.Entries {
		e := Entry{ID: strings.TrimSpace(xe.ID), Title: xe.Title, Links: links(xe.Links), Length: -1}
		if e.ID == "" {
			return nil, fmt.Errorf("atom: entry %d has no atom:id", i)
		}
		if e.Updated, err = parseTime(xe.Updated); err != nil {
			return nil, fmt.Errorf("atom: entry %d (%s) updated: %w", i, e.ID, err)
		}
		if c := xe.Content; c != nil {
			e.HasContent, e.ContentSrc, e.ContentEmpty = true, c.Src, strings.TrimSpace(c.Inner) == ""
		}
		if md := xe.MD; md != nil {
			e.Change, e.Hash, e.Type = md.Change, md.Hash, md.Type
			if n, err := strconv.ParseInt(md.Length, 10, 64); err == nil && n >= 0 {
				e.Length = n
			}
		}
		f.Entries = append(f.Entries, e)
	}
	return f, nil
}

func links(xs []xmlLink) []Link {
	out := make([]Link, 0, len(xs))
	for _, l := range xs {
		out = append(out, Link{Rel: strings.TrimSpace(l.Rel), Href: strings.TrimSpace(l.Href), Type: l.Type})
	}
	return out
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("not an RFC 3339 date-time: %w", err)
	}
	return t, nil
}
