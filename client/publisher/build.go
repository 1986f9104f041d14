package publisher

import (
	"bytes"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Change is one resource change to announce.
type Change struct {
	Loc    string            // URI of the resource
	Change changefeed.Change // created, updated or deleted
	// DateTime is when the change happened; zero means the notification's
	// until. It is moved into [from, until] if it lies outside.
	DateTime time.Time
	LastMod  time.Time // optional last modification time
	Hash     string    // optional, e.g. "md5:… sha-256:…"
	Length   int64     // optional; negative means absent
	Type     string    // optional media type
}

// Window is the [From, Until] a notification covers.
type Window struct{ From, Until time.Time }

// NextWindow returns the window of the next notification: it starts at
// last (the previous until, or start before the first notification) and
// ends at now, or later when a change happened after now or when the clock
// went back, so that from <= until and every change fits.
func NextWindow(last, now time.Time, changes []Change) Window {
	w := Window{From: last, Until: now}
	if w.Until.Before(w.From) {
		w.Until = w.From
	}
	for _, c := range changes {
		if c.DateTime.After(w.Until) {
			w.Until = c.DateTime
		}
	}
	return w
}

// Build encodes a change-notification for changes over w, entries in the
// order given (sort them oldest first), with an rs:ln rel="up" to
// capabilityList when it is not empty. The result passes changefeed's
// Strict validation.
func Build(w Window, changes []Change, capabilityList string) ([]byte, error) {
	if w.From.IsZero() || w.Until.Before(w.From) {
		return nil, fmt.Errorf("publisher: bad window [%s, %s]", w.From, w.Until)
	}
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: changefeed.MD{Length: -1}}}
	doc.MD.Capability = changefeed.CapChangeNotification
	doc.MD.From = changefeed.NewDateTime(w.From)
	doc.MD.Until = changefeed.NewDateTime(w.Until)
	if capabilityList != "" {
		doc.Links = []changefeed.Link{{Rel: "up", Href: capabilityList, Length: -1, Pri: -1}}
	}
	var last time.Time
	for i, c := range changes {
		if c.Loc == "" {
			return nil, fmt.Errorf("publisher: change %d has no loc", i)
		}
		switch c.Change {
		case changefeed.Created, changefeed.Updated, changefeed.Deleted:
		default:
			return nil, fmt.Errorf("publisher: change %d (%s): change must be created, updated or deleted, got %q", i, c.Loc, c.Change)
		}
		at := c.DateTime
		switch {
		case at.IsZero() || at.After(w.Until):
			at = w.Until
		case at.Before(w.From):
			at = w.From
		}
		if at.Before(last) {
			at = last // forward chronological order (RSN-11)
		}
		last = at
		md := &changefeed.MD{Change: c.Change, DateTime: changefeed.NewDateTime(at), Hash: c.Hash, Length: -1, Type: c.Type}
		if c.Length >= 0 {
			md.Length = c.Length
		}
		e := changefeed.Entry{Loc: c.Loc, MD: md}
		if !c.LastMod.IsZero() {
			e.LastMod = changefeed.NewDateTime(c.LastMod)
		}
		doc.Entries = append(doc.Entries, e)
	}
	if err := changefeed.Validate(doc, changefeed.Options{}); err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	var buf bytes.Buffer
	if err := changefeed.Encode(&buf, doc); err != nil {
		return nil, fmt.Errorf("publisher: encode: %w", err)
	}
	return buf.Bytes(), nil
}
