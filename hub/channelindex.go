package hub

// Finding a stored channel by name or topic: an index of the store's
// channels, listed again when it is older than channelCacheTTL.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rshub/rshub/wire"
)

// ChannelByName finds a channel by its name, a framework channel
// (wire.FrameworkChannel) included.
func (h *Hub) ChannelByName(ctx context.Context, name string) (Channel, error) {
	ch, err := h.storedChannelByName(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return h.frameworkChannel(ctx, name)
	}
	return ch, err
}

// storedChannelByName finds a channel of the store by its name, in an
// index of the store's channels listed at most channelCacheTTL ago
// (channels put or deleted through this hub show at once, through another
// hub within channelCacheTTL): one listing serves every lookup meanwhile,
// instead of one listing per lookup.
func (h *Hub) storedChannelByName(ctx context.Context, name string) (Channel, error) {
	return h.indexed(ctx, func(x *nameIndex) (Channel, bool) {
		ch, ok := x.byName[name]
		return ch, ok
	})
}

// storedChannelByNormalTopic finds a channel of the store whose topic is
// not spelled normally (stored before topics were normalised) by the
// normal spelling of its topic (wire.NormalizeURL), in the index of
// storedChannelByName.
func (h *Hub) storedChannelByNormalTopic(ctx context.Context, topic string) (Channel, error) {
	return h.indexed(ctx, func(x *nameIndex) (Channel, bool) {
		ch, ok := x.byName[x.byNormal[topic]]
		return ch, ok
	})
}

// indexed answers find from the index of the store's channels, listing
// the store again when the index is older than channelCacheTTL.
func (h *Hub) indexed(ctx context.Context, find func(*nameIndex) (Channel, bool)) (Channel, error) {
	if ch, found, fresh := h.names.get(find, h.cfg.Now()); fresh {
		if !found {
			return Channel{}, ErrNotFound
		}
		return ch, nil
	}
	if err := h.names.failing(h.cfg.Now()); err != nil {
		return Channel{}, err
	}
	// one listing at a time: the callers that found the index stale together
	// (every live session checks each record's channel) wait for it and
	// answer from it, instead of each listing the store
	release, err := h.names.acquire(ctx)
	if err != nil {
		return Channel{}, err
	}
	defer release()
	if ch, found, fresh := h.names.get(find, h.cfg.Now()); fresh {
		if !found {
			return Channel{}, ErrNotFound
		}
		return ch, nil
	}
	if err := h.names.failing(h.cfg.Now()); err != nil { // the listing waited for failed
		return Channel{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	chs, err := h.cfg.Store.Channels(lctx)
	if err != nil {
		if ctx.Err() == nil { // the store's failure, not this caller's end
			h.names.failed(err, h.cfg.Now())
		}
		return Channel{}, err
	}
	h.names.reset(chs, h.cfg.Now())
	if ch, found, _ := h.names.get(find, h.cfg.Now()); found {
		return ch, nil
	}
	return Channel{}, ErrNotFound
}

// nameIndex is the store's channels by name, as last listed.
type nameIndex struct {
	mu      sync.Mutex
	listing chan struct{} // one slot: held while the store is listed (acquire)
	// lastErr is the last listing's failure, answered without listing
	// again until retryAt (a store that hangs costs one listTimeout a
	// second, not one per lookup).
	lastErr error
	retryAt time.Time
	byName  map[string]Channel
	byTopic map[string]string // topic to name, to move a renamed channel
	// byNormal is the normal spelling (wire.NormalizeURL) of each topic
	// stored spelled otherwise, to its channel's name
	byNormal map[string]string
	listed   time.Time
}

// get answers find from the index; fresh is false when the index is older
// than channelCacheTTL (or was never built) and must be listed again.
func (x *nameIndex) get(find func(*nameIndex) (Channel, bool), now time.Time) (ch Channel, found, fresh bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byName == nil || now.Sub(x.listed) >= channelCacheTTL {
		return Channel{}, false, false
	}
	ch, found = find(x)
	return ch, found, true
}

// listTimeout bounds one listing of the store's channels for the index, so
// the callers waiting for it are not held longer by a store that hangs.
const listTimeout = 5 * time.Second

// acquire takes the right to list the store for the index, waiting at
// most until ctx ends, and returns its release.
func (x *nameIndex) acquire(ctx context.Context) (func(), error) {
	x.mu.Lock()
	if x.listing == nil {
		x.listing = make(chan struct{}, 1)
	}
	slot := x.listing
	x.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the channel listing: %w", ctx.Err())
	}
}

// listRetry is how long a failed listing is answered again before the
// store is listed anew.
const listRetry = time.Second

// failed records a listing that failed at now.
func (x *nameIndex) failed(err error, now time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.lastErr, x.retryAt = err, now.Add(listRetry)
}

// failing is the last listing's failure while it is answered again, or nil.
func (x *nameIndex) failing(now time.Time) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lastErr != nil && now.Before(x.retryAt) {
		return x.lastErr
	}
	return nil
}

// reset replaces the index with a listing taken at now.
func (x *nameIndex) reset(chs []Channel, now time.Time) {
	byName := make(map[string]Channel, len(chs))
	byTopic := make(map[string]string, len(chs))
	byNormal := map[string]string{}
	for _, c := range chs {
		byName[c.Name] = c
		byTopic[c.Topic] = c.Name
		if n, ok := otherSpelling(c.Topic); ok {
			byNormal[n] = c.Name
		}
	}
	x.mu.Lock()
	x.byName, x.byTopic, x.byNormal, x.listed = byName, byTopic, byNormal, now
	x.lastErr = nil
	x.mu.Unlock()
}

// put notes a channel just stored.
func (x *nameIndex) put(ch Channel) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byName == nil {
		return
	}
	if old, ok := x.byTopic[ch.Topic]; ok {
		delete(x.byName, old)
	}
	x.byName[ch.Name] = ch
	x.byTopic[ch.Topic] = ch.Name
	if n, ok := otherSpelling(ch.Topic); ok {
		x.byNormal[n] = ch.Name
	}
}

// remove notes a channel just deleted.
func (x *nameIndex) remove(topic string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if name, ok := x.byTopic[topic]; ok {
		delete(x.byName, name)
		delete(x.byTopic, topic)
	}
	if n, ok := otherSpelling(topic); ok {
		delete(x.byNormal, n)
	}
}

// otherSpelling returns the normal spelling of topic when it is not
// spelled normally.
func otherSpelling(topic string) (string, bool) {
	n, err := wire.NormalizeURL(topic)
	return n, err == nil && n != topic
}
