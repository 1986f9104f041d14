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
	err = p.metadata(ctx, cursor+1, func(rec hub.Record) error {
		entries := rec.Entries
		if entries == 0 && !rec.From.IsZero() {
			if rec.Body == nil { // a headers-only read of a record stored without its count
				full, err := p.log.Next(ctx, rec.Channel, rec.Seq)
				if err != nil {
					return err
				}
				rec.Body = full.Body
			}
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

// HeaderRangeLog is a RangeLog that can also read records' metadata
// without their bodies; the list index is built from it when available.
type HeaderRangeLog interface {
	RangeLog
	RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(hub.Record) error) error
}

// metadata calls fn for every record from seq on, with or without bodies.
func (p *Pull) metadata(ctx context.Context, from uint64, fn func(hub.Record) error) error {
	if hl, ok := p.log.(HeaderRangeLog); ok {
		return hl.RangeHeaders(ctx, "", from, math.MaxUint64, fn)
	}
	return p.records(ctx, "", from, math.MaxUint64, fn)
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
