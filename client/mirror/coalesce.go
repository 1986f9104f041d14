package mirror

import (
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// coalesceBatch is how many documents a coalescer folds at once.
const coalesceBatch = 256

// coalescer folds consecutive change documents into their net change per
// resource (changefeed.Coalesce) as they come: it holds the net entries
// so far and at most coalesceBatch documents, never the whole run.
type coalescer struct {
	max        int // entries of the result at most
	acc        *changefeed.Document
	pending    []*changefeed.Document
	entries    int // entries of acc and pending
	docs       int // documents added
	first      uint64
	last       uint64
	lastUntil  time.Time
	capability changefeed.Capability
}

func newCoalescer(maxEntries int) *coalescer {
	if maxEntries <= 0 {
		maxEntries = changefeed.DefaultMaxEntries
	}
	return &coalescer{max: maxEntries}
}

// fits reports whether doc can join the run: a change document with a
// window starting at or after the run's until, of the run's capability,
// each entry with its change, not taking the run past its entry bound.
func (c *coalescer) fits(doc *changefeed.Document) bool {
	if doc.MD.From.IsZero() || doc.MD.Until.IsZero() {
		return false
	}
	for i := range doc.Entries {
		if md := doc.Entries[i].MD; md == nil || md.Change == "" {
			return false
		}
	}
	if c.docs == 0 {
		return len(doc.Entries) <= c.max
	}
	if doc.MD.Capability != c.capability || doc.MD.From.Time.Before(c.lastUntil) {
		return false
	}
	if c.entries+len(doc.Entries) > c.max {
		if err := c.fold(); err != nil {
			return false
		}
	}
	return c.entries+len(doc.Entries) <= c.max
}

// add adds doc (log sequence seq, 0 when unknown) to the run; the caller
// checked fits.
func (c *coalescer) add(doc *changefeed.Document, seq uint64) error {
	if c.docs == 0 {
		c.first, c.capability = seq, doc.MD.Capability
	}
	c.docs++
	c.last, c.lastUntil = seq, doc.MD.Until.Time
	c.pending = append(c.pending, doc)
	c.entries += len(doc.Entries)
	if len(c.pending) >= coalesceBatch {
		return c.fold()
	}
	return nil
}

// fold coalesces the pending documents into acc.
func (c *coalescer) fold() error {
	if len(c.pending) == 0 {
		return nil
	}
	docs := c.pending
	if c.acc != nil {
		docs = append([]*changefeed.Document{c.acc}, docs...)
	}
	out, err := changefeed.CoalesceDeleting(docs, c.max) // the mirror may hold what the run created and deleted
	if err != nil {
		return fmt.Errorf("mirror: coalescing: %w", err)
	}
	if len(out) != 1 {
		return fmt.Errorf("mirror: coalescing gave %d documents", len(out))
	}
	clear(c.pending)
	c.pending = c.pending[:0]
	c.acc = out[0]
	c.entries = len(c.acc.Entries)
	return nil
}

// take returns the coalesced run (nil when empty) and resets the coalescer.
func (c *coalescer) take() (doc *changefeed.Document, first, last uint64, docs int, err error) {
	if c.docs == 0 {
		return nil, 0, 0, 0, nil
	}
	err = c.fold()
	doc, first, last, docs = c.acc, c.first, c.last, c.docs
	*c = coalescer{max: c.max}
	return doc, first, last, docs, err
}
