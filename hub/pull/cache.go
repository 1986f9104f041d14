package pull

import (
	lru "container/list"
	"context"
	"sync"
)

// rendered is a closed Change List rendered once: gzip-compressed bytes and
// the length of the document they decompress to.
type rendered struct {
	gz   []byte
	size int64
}

// listCache keeps rendered closed Change Lists (immutable, so never stale)
// within a byte budget, least recently used out first. Concurrent misses
// for one key render once.
type listCache struct {
	max int64 // < 0: disabled

	mu       sync.Mutex
	used     int64
	lru      *lru.List // of *cacheItem, most recent first
	items    map[string]*lru.Element
	inflight map[string]*flight
	hits     uint64
	misses   uint64
}

type cacheItem struct {
	key string
	r   *rendered
}

type flight struct {
	done chan struct{}
	r    *rendered
	err  error
}

func newListCache(max int64) *listCache {
	return &listCache{max: max, lru: lru.New(), items: map[string]*lru.Element{}, inflight: map[string]*flight{}}
}

// enabled reports whether the cache keeps anything.
func (c *listCache) enabled() bool { return c.max >= 0 }

// get returns the rendering of key, calling render on a miss (once for
// concurrent callers) and keeping the result when it fits the budget.
func (c *listCache) get(ctx context.Context, key string, render func() (*rendered, error)) (*rendered, error) {
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.lru.MoveToFront(el)
		c.hits++
		c.mu.Unlock()
		return el.Value.(*cacheItem).r, nil
	}
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.r, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.misses++
	c.mu.Unlock()

	f.r, f.err = render()

	c.mu.Lock()
	delete(c.inflight, key)
	if f.err == nil {
		c.add(key, f.r)
	}
	c.mu.Unlock()
	close(f.done)
	return f.r, f.err
}

// add stores r under key and evicts to the budget. c.mu is held.
func (c *listCache) add(key string, r *rendered) {
	n := int64(len(r.gz))
	if n > c.max {
		return
	}
	c.items[key] = c.lru.PushFront(&cacheItem{key: key, r: r})
	c.used += n
	for c.used > c.max {
		el := c.lru.Back()
		it := el.Value.(*cacheItem)
		c.lru.Remove(el)
		delete(c.items, it.key)
		c.used -= int64(len(it.r.gz))
	}
}

// drop forgets key (its list is gone from the log).
func (c *listCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.lru.Remove(el)
		delete(c.items, key)
		c.used -= int64(len(el.Value.(*cacheItem).r.gz))
	}
}
