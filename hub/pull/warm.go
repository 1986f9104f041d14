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
// catch-up; a failure is left to the next request to report.
func (p *Pull) warmClosed(ctx context.Context) {
	if !p.cache.enabled() {
		return
	}
	chans, err := p.channels(ctx, false)
	if err != nil {
		return
	}
	for _, ch := range chans {
		closed, _, _ := p.snapshot(ch.Name)
		p.mu.Lock()
		if p.warmed == nil {
			p.warmed = map[string]uint64{}
		}
		done := p.warmed[ch.Name]
		p.mu.Unlock()
		n := 0
		for i := len(closed) - 1; i >= 0 && n < warmBatch && closed[i].FirstSeq > done; i-- {
			if ctx.Err() != nil {
				return
			}
			if _, err := p.renderClosed(ctx, ch.Name, closed[i]); err != nil {
				p.logger.Debug("rendering a closed Change List ahead", "channel", ch.Name, "first_seq", closed[i].FirstSeq, "err", err)
				break
			}
			n++
		}
		if len(closed) > 0 && n > 0 {
			p.mu.Lock()
			p.warmed[ch.Name] = max(p.warmed[ch.Name], closed[len(closed)-1].FirstSeq)
			p.mu.Unlock()
		}
	}
}

// CacheStats reports the rendered closed-list cache.
func (p *Pull) CacheStats() CacheStats { return p.cache.stats() }
