package pull

import (
	"context"
	"time"

	"github.com/rshub/rshub/hub"
)

// SetClock replaces the clock of p's channel listing TTL and channel
// announcements, for tests.
func SetClock(p *Pull, now func() time.Time) {
	p.chMu.Lock()
	defer p.chMu.Unlock()
	p.chClock = now
}

// Listing returns p's channel listing as the framework sees it, for tests.
func Listing(ctx context.Context, p *Pull) ([]hub.Channel, error) {
	list, _, err := p.listing(ctx, false)
	return list, err
}

// Channel looks channel name up as a request for its documents does,
// listing the channels again when it is not known, for tests.
func Channel(ctx context.Context, p *Pull, name string) (hub.Channel, bool, error) {
	return p.channel(ctx, name)
}

// CacheStats describes the rendered-list cache.
type CacheStats struct {
	Lists  int   // closed lists held
	Bytes  int64 // compressed bytes held
	Hits   uint64
	Misses uint64 // renderings done (ahead of a request, or for one)
}

// CacheStats reports the rendered closed-list cache, for tests.
func (p *Pull) CacheStats() CacheStats {
	c := p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Lists: len(c.items), Bytes: c.used, Hits: c.hits, Misses: c.misses}
}
