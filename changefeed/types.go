package changefeed

import (
	"encoding/xml"
	"time"
)

// Namespaces used by ResourceSync documents.
const (
	// NSSitemap is the Sitemap protocol namespace, the default namespace of every document.
	NSSitemap = "http://www.sitemaps.org/schemas/sitemap/0.9"
	// NSRS is the ResourceSync terms namespace, conventionally bound to the prefix "rs".
	NSRS = "http://www.openarchives.org/rs/terms/"
)

// Capability is the value of an rs:md capability attribute.
type Capability string

// Capability values the hub reads or writes.
const (
	CapChangeNotification     Capability = "change-notification"
	CapChangeListNotification Capability = "changelist-notification" // ResourceSync Change Notification 1.0, accepted on input
	CapFrameworkNotification  Capability = "framework-notification"
	CapChangeList             Capability = "changelist"
	CapChangeListArchive      Capability = "changelist-archive"
	CapResourceList           Capability = "resourcelist"
	CapResourceDump           Capability = "resourcedump"
	CapChangeDump             Capability = "changedump"
	CapResourceDumpManifest   Capability = "resourcedump-manifest"
	CapChangeDumpManifest     Capability = "changedump-manifest"
	CapCapabilityList         Capability = "capabilitylist"
	CapDescription            Capability = "description"
	CapResourceListArchive    Capability = "resourcelist-archive"
	CapResourceDumpArchive    Capability = "resourcedump-archive"
	CapChangeDumpArchive      Capability = "changedump-archive"
)

// Change is the value of an entry's rs:md change attribute.
type Change string

// Change values defined by ResourceSync.
const (
	Created Change = "created"
	Updated Change = "updated"
	Deleted Change = "deleted"
)

// Kind tells which Sitemap root element a document uses.
type Kind uint8

// Document kinds.
const (
	// URLSet is a <urlset> document whose entries are <url> elements.
	URLSet Kind = iota
	// SitemapIndex is a <sitemapindex> document whose entries are <sitemap> elements.
	SitemapIndex
)

// DateTime is a W3C Datetime as written in a document. Raw keeps the
// original lexical form (so every granularity survives a round trip); Time is
// its instant, the start of the period for reduced granularities such as
// "2013" or "2013-01-03". The zero DateTime means the attribute was absent.
type DateTime struct {
	Time time.Time
	Raw  string
}

// IsZero reports whether the datetime is absent.
func (d DateTime) IsZero() bool { return d.Raw == "" }

// Extension is foreign-namespace content kept through a round trip:
// attributes on an element, or whole child elements serialised as XML.
type Extension struct {
	Attrs    []xml.Attr // foreign attributes, with their namespace URI in Name.Space
	Elements []RawElement
}

// RawElement is a foreign child element, kept verbatim (namespace-normalised).
type RawElement struct {
	Name xml.Name
	XML  []byte // the element's canonical serialisation, including start and end tags
}

// MD is an rs:md element: on the root it describes the document, on an entry
// the resource. Absent integer attributes are negative.
type MD struct {
	Capability Capability
	Change     Change
	DateTime   DateTime
	Hash       string // space-separated algorithm:hexdigest tokens
	Length     int64  // -1 when absent
	Type       string
	Encoding   string
	Path       string
	From       DateTime
	Until      DateTime
	At         DateTime
	Completed  DateTime
	Ext        []xml.Attr // foreign-namespace attributes
}

// Link is an rs:ln element. Absent integer attributes are negative.
type Link struct {
	Rel      string
	Href     string
	Modified DateTime
	Hash     string
	Length   int64 // -1 when absent
	Type     string
	Encoding string
	Path     string
	Pri      int // 1..999999; -1 (or 0) when absent
	Ext      []xml.Attr
}

// Entry is a <url> or <sitemap> element.
type Entry struct {
	Loc        string
	LastMod    DateTime
	ChangeFreq string
	Priority   string // sitemap <priority>, kept verbatim
	MD         *MD    // nil when the entry has no rs:md
	Links      []Link
	Ext        Extension
}

// Header is everything in a document except its entries: the root element,
// its rs:md and rs:ln children and foreign content at root level.
type Header struct {
	Kind  Kind
	MD    MD
	Links []Link
	Ext   Extension
}

// Document is a whole ResourceSync document held in memory.
type Document struct {
	Header
	Entries []Entry
	// Trailer holds extension elements found at root level after the first
	// entry; the encoder writes them after the last entry.
	Trailer []RawElement
}

// Link returns the href of the first root rs:ln with the given rel, or "".
func (h *Header) Link(rel string) string {
	for i := range h.Links {
		if h.Links[i].Rel == rel {
			return h.Links[i].Href
		}
	}
	return ""
}
