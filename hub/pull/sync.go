package pull

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// Sync catches the list index up with the log: it applies every record
// appended since the last Sync and drops what retention removed. Handlers
// call it before answering for a document that can change, so a response
// reflects at least every append acknowledged before the request. When it
// fails, the records applied so far stay applied and the next Sync goes on
// from there.
func (p *Pull) Sync(ctx context.Context) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	// under syncMu, so the health follows the order of the reads
	return p.h.Report(ctx, opSync, p.syncLocked(ctx))
}

// syncCatchUp bounds how long a Sync waits for a cache in front of the log
// to absorb the records the log's bounds promise.
const syncCatchUp = 2 * time.Second

// syncLocked is Sync; the caller holds syncMu. It reads to the log's last
// sequence as its bounds give it when the Sync starts: a cache in front of
// the log (hub/logcache) may not have absorbed an append acknowledged by
// another writer yet, so a read that ends early waits for the cache to
// absorb more and reads on, for at most syncCatchUp.
func (p *Pull) syncLocked(ctx context.Context) error {
	first, last, err := p.log.Bounds(ctx)
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

	seen := cursor
	_, err = logcache.Await(ctx, p.log, syncCatchUp, nil, func(bool) (bool, error) {
		err := p.metadata(ctx, seen+1, func(rec wire.Record) error {
			seen = max(seen, rec.Seq)
			return p.applyRecord(ctx, rec)
		})
		return seen >= last, err
	})
	if err != nil {
		return fmt.Errorf("pull: sync from %d: %w", cursor+1, err)
	}
	return p.emitFramework(ctx)
}

// applyRecord feeds one record read by syncLocked to the index.
func (p *Pull) applyRecord(ctx context.Context, rec wire.Record) error {
	p.mu.Lock()
	fw := p.frameworkRecordLocked(rec)
	p.mu.Unlock()
	if fw {
		return nil
	}
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
	if !rec.From.IsZero() && p.meets(rec.Channel) {
		var err error
		if when, err = p.created(ctx, rec.Channel); err != nil {
			return err // applied again by the next Sync
		}
	}
	p.mu.Lock()
	before := p.closedCountLocked(rec.Channel)
	p.idx.apply(rec, entries, when)
	p.rotationLocked(rec, before)
	p.mu.Unlock()
	return nil
}

// HeaderRangeLog is a RangeLog that can also read records' metadata
// without their bodies; the list index is built from it when available.
type HeaderRangeLog interface {
	RangeLog
	RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error
}

// metadata calls fn for every record from seq on, with or without bodies.
func (p *Pull) metadata(ctx context.Context, from uint64, fn func(wire.Record) error) error {
	if hl, ok := p.log.(HeaderRangeLog); ok {
		return hl.RangeHeaders(ctx, "", from, math.MaxUint64, fn)
	}
	return p.records(ctx, "", from, math.MaxUint64, fn)
}

// meets reports whether the index would start channel name's lists with
// the next record: when the log's beginning was removed, whether a channel
// has its whole history in the log depends on when it was created.
func (p *Pull) meets(name string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return !p.idx.whole && p.idx.chans[name] == nil
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

// applied returns the last sequence the index applied.
func (p *Pull) applied() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.idx.cursor
}
