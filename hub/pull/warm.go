package pull

import (
	"context"
)

// warmBatch bounds how many closed lists one pass renders ahead, so a hub
// starting on a long history does not stall following new appends.
const warmBatch = 4

// renderClosed returns the cached rendering of closed list l of channel
// name, rendering it on a miss. A closed list always links to its index and
// the archive, so its header and cache key depend on nothing else.
func (p *Pull) renderClosed(ctx context.Context, name string, l list) (*rendered, error) {
	hdr := p.listHeader(name, l, true, true)
	key := tag("changelist", p.cfgTag(), name, l.FirstSeq, l.LastSeq, l.Closed, true, true)
	return p.cache.get(ctx, key, func() (*rendered, error) {
		return p.render(context.WithoutCancel(ctx), name, l, hdr)
	})
}

// warmClosed renders lists that closed since the last pass into the cache,
// newest first, so the first GET of a closed Change List is served from
// memory rather than streamed from the log. It is called by Run after each
// catch-up and looks only at the channels whose lists closed since the
// last pass, so its cost follows the rotations, not the channels; a
// failure is left to the next request to report.
func (p *Pull) warmClosed(ctx context.Context) {
	p.mu.Lock()
	if !p.cache.enabled() {
		clear(p.idx.closing)
		p.mu.Unlock()
		return
	}
	names := make([]string, 0, len(p.idx.closing))
	for name := range p.idx.closing {
		names = append(names, name)
	}
	clear(p.idx.closing)
	p.mu.Unlock()
	if len(names) == 0 {
		return
	}
	if _, err := p.channels(ctx, false); err != nil {
		p.requeueWarm(names)
		return
	}
	for i, name := range names {
		if ctx.Err() != nil {
			p.requeueWarm(names[i:])
			return
		}
		if _, ok := p.listed(name); ok && !p.warmChannel(ctx, name) {
			p.requeueWarm(names[i : i+1])
		}
	}
}

// warmChannel renders ahead at most warmBatch of channel name's closed
// lists not rendered before, newest first. It reports false when the first
// rendering failed (nothing was done: the next pass tries again).
func (p *Pull) warmChannel(ctx context.Context, name string) bool {
	closed, _, _ := p.snapshot(name)
	p.mu.RLock()
	done := uint64(0)
	if c := p.idx.chans[name]; c != nil {
		done = c.warmed
	}
	p.mu.RUnlock()
	n := 0
	for i := len(closed) - 1; i >= 0 && n < warmBatch && closed[i].FirstSeq > done; i-- {
		if _, err := p.renderClosed(ctx, name, closed[i]); err != nil {
			p.logger.Debug("rendering a closed Change List ahead", "channel", name, "first_seq", closed[i].FirstSeq, "err", err)
			break
		}
		n++
	}
	if n == 0 {
		return len(closed) == 0 || closed[len(closed)-1].FirstSeq <= done
	}
	p.mu.Lock()
	if c := p.idx.chans[name]; c != nil {
		c.warmed = max(c.warmed, closed[len(closed)-1].FirstSeq)
	}
	p.mu.Unlock()
	return true
}

// requeueWarm puts channels back for the next warm pass.
func (p *Pull) requeueWarm(names []string) {
	p.mu.Lock()
	for _, name := range names {
		p.idx.closing[name] = struct{}{}
	}
	p.mu.Unlock()
}
