package pull

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// Sync catches the list index up with the log: it applies every record
// appended since the last Sync and drops what retention removed. Handlers
// call it before answering for a document that can change, so a response
// reflects at least every append acknowledged before the request.
func (p *Pull) Sync(ctx context.Context) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	first, _, err := p.log.Bounds(ctx)
	if err != nil {
		return fmt.Errorf("pull: sync: %w", err)
	}
	p.mu.Lock()
	if !p.idx.started {
		p.idx.started = true
		p.idx.whole = first <= 1
		p.idx.cursor = max(first, 1) - 1
	}
	p.idx.prune(first)
	cursor := p.idx.cursor
	p.mu.Unlock()

	var created map[string]time.Time
	err = p.records(ctx, "", cursor+1, math.MaxUint64, func(rec hub.Record) error {
		entries := rec.Entries
		if entries == 0 && !rec.From.IsZero() && len(rec.Body) > 0 {
			entries = countEntries(rec.Body)
		}
		var when time.Time
		if !rec.From.IsZero() {
			if created == nil {
				created = p.creationTimes(ctx)
			}
			when = created[rec.Channel]
		}
		p.mu.Lock()
		p.idx.apply(rec, entries, when)
		p.mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("pull: sync from %d: %w", cursor+1, err)
	}
	return nil
}

// creationTimes maps channel names to their creation times; empty when the
// channels cannot be listed (channels are then treated as older than the log).
func (p *Pull) creationTimes(ctx context.Context) map[string]time.Time {
	m := map[string]time.Time{}
	list, err := p.channels(ctx, false)
	if err != nil {
		p.lg.Warn("listing channels", "err", err)
		return m
	}
	for _, ch := range list {
		m[ch.Name] = ch.Created
	}
	return m
}

// countEntries counts the entries of a notification body, for logs that do
// not record the count. An unreadable body counts as no entries.
func countEntries(body []byte) int {
	d := changefeed.NewDecoder(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient})
	if _, err := d.Header(); err != nil {
		return 0
	}
	n := 0
	for {
		if _, err := d.Next(); err != nil { // io.EOF, or the first bad entry
			return n
		}
		n++
	}
}

// snapshot returns a copy of what the index knows of channel name: its
// served closed lists (a shared, append-only prefix: do not modify), the
// open list if served, and false when the channel has no lists.
func (p *Pull) snapshot(name string) (closed []list, open list, hasOpen bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	c := p.idx.chans[name]
	if c == nil {
		return nil, list{}, false
	}
	open, hasOpen = c.open()
	return c.closed[:len(c.closed):len(c.closed)], open, hasOpen
}

// forget drops the lists of name that start before seq: a read found the
// log no longer holds seq.
func (p *Pull) forget(seq uint64) {
	p.mu.Lock()
	p.idx.prune(seq + 1)
	p.mu.Unlock()
}
