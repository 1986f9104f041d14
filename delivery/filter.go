package delivery

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Per-subscription filters (wire.ParamFilterPrefix, wire.ParamFilterChange).
//
// A subscription with a Filter receives each ResourceSync change
// notification (an XML body whose capability is change-notification or
// changelist-notification) with only the entries its filter selects,
// re-encoded with changefeed: the header, and so from and until, stay as
// stored, so the destination's continuity check holds. A notification
// none of whose entries match is still delivered, with no entry and its
// window, so the destination's position moves on. When every entry
// matches, the stored bytes are delivered unchanged. Other content (not
// XML, not a change notification, or not readable) is delivered as it
// is. A subscription without a filter receives the stored bytes, as
// WebSub says. The signature is computed over the body actually sent.
//
// Filtering costs a parse and an encode per notification and distinct
// filter: the results are kept in a small cache shared by every queue of
// the engine, keyed by log sequence and filter, so subscriptions with the
// same filter and retries of the same notification reuse them.

// Bounds of the filter cache.
const (
	filterCacheEntries = 256      // results kept
	filterCacheBytes   = 32 << 20 // bytes of filtered bodies kept
)

// filterCache keeps filtered bodies by (sequence, filter). Its zero value
// is ready to use; it is safe for concurrent use.
type filterCache struct {
	mu    sync.Mutex
	m     map[filterCacheKey]*filterResult
	order []filterCacheKey // insertion order, oldest first
	bytes int
}

type filterCacheKey struct {
	seq    uint64
	filter string
}

// filterResult is one (notification, filter) result, computed once.
type filterResult struct {
	once sync.Once
	body []byte // nil: deliver the stored body
	err  error
}

// filterKey is f as a cache key: equal filters have equal keys.
func filterKey(f *changefeed.Filter) string {
	var b strings.Builder
	for _, c := range f.Changes {
		b.WriteString(string(c))
		b.WriteByte(',')
	}
	for _, p := range f.Prefixes {
		b.WriteByte('\n')
		b.WriteString(p)
	}
	return b.String()
}

// filteredRecord returns rec as sub receives it: with a body holding only
// the entries sub's filter selects (see the comment at the top of this
// file). Without a filter, or for content that is not filtered, it returns
// rec unchanged.
func (c *filterCache) filteredRecord(rec wire.Record, f *changefeed.Filter) (wire.Record, error) {
	if f == nil || f.IsZero() || !rec.IsXML() {
		return rec, nil
	}
	k := filterCacheKey{seq: rec.Seq, filter: filterKey(f)}
	r := c.get(k)
	r.once.Do(func() {
		r.body, r.err = filterBody(rec.Body, f)
		c.account(k, r)
	})
	if r.err != nil {
		return rec, fmt.Errorf("delivery: filtering record %d: %w", rec.Seq, r.err)
	}
	if r.body != nil {
		rec.Body = r.body
	}
	return rec, nil
}

// get returns the cache's result for k, adding an empty one when missing
// and dropping the oldest past the bounds.
func (c *filterCache) get(k filterCacheKey) *filterResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.m[k]; ok {
		return r
	}
	if c.m == nil {
		c.m = map[filterCacheKey]*filterResult{}
	}
	r := &filterResult{}
	c.m[k] = r
	c.order = append(c.order, k)
	c.evict()
	return r
}

// account adds r's body to the cache's size once computed.
func (c *filterCache) account(k filterCacheKey, r *filterResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[k] != r {
		return // evicted meanwhile
	}
	c.bytes += len(r.body)
	c.evict()
}

// evict drops the oldest results until the cache is within its bounds.
// The caller holds mu.
func (c *filterCache) evict() {
	for len(c.order) > 0 && (len(c.order) > filterCacheEntries || c.bytes > filterCacheBytes) {
		k := c.order[0]
		c.order = c.order[1:]
		if r, ok := c.m[k]; ok {
			c.bytes -= len(r.body)
			delete(c.m, k)
		}
	}
	if cap(c.order) > 4*filterCacheEntries {
		c.order = append([]filterCacheKey(nil), c.order...)
	}
}

// filterBody returns body with only the entries f selects, or nil when
// body is to be delivered as stored: it is not a readable ResourceSync
// change notification, or f selects every entry.
func filterBody(body []byte, f *changefeed.Filter) ([]byte, error) {
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient})
	if err != nil || doc.Kind != changefeed.URLSet {
		return nil, nil
	}
	switch doc.MD.Capability {
	case changefeed.CapChangeNotification, changefeed.CapChangeListNotification:
	default:
		return nil, nil
	}
	out := f.Apply(doc)
	if len(out.Entries) == len(doc.Entries) {
		return nil, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(body))
	if err := changefeed.Encode(&buf, out); err != nil {
		return nil, fmt.Errorf("re-encoding the filtered notification: %w", err)
	}
	return buf.Bytes(), nil
}
