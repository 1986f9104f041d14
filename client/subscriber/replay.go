package subscriber

import (
	"container/heap"
	"crypto/sha256"
	"errors"
	"sync"
	"time"
)

// DefaultMaxReplayIDs bounds the webhook-ids a Handler remembers at once.
// At 40 bytes or so each, the default is a few MiB; it admits 100,000
// Standard Webhooks deliveries per tolerance window (333 a second with the
// default five minutes).
const DefaultMaxReplayIDs = 100_000

// ErrReplayed is wrapped by the error of a delivery whose webhook-id this
// Handler already took for the same subscription within the tolerance
// window: a captured delivery sent again, or the hub retrying one whose
// answer it lost. Either way it is answered 2xx and not handed over again.
var ErrReplayed = errors.New("subscriber: webhook-id already received")

// ErrReplayCacheFull is wrapped by the error of a delivery that could not
// be checked for replay because MaxReplayIDs ids, none expired, are
// remembered. The delivery is answered 503 so that the hub retries it
// later, when ids have expired; it is never taken unchecked.
var ErrReplayCacheFull = errors.New("subscriber: replay cache full")

// replayKey identifies a webhook-id of one subscription.
type replayKey [16]byte

func newReplayKey(subID, msgID string) replayKey {
	h := sha256.New()
	h.Write([]byte(subID))
	h.Write([]byte{0})
	h.Write([]byte(msgID))
	var k replayKey
	copy(k[:], h.Sum(nil))
	return k
}

// replayCache remembers webhook-ids until their timestamp leaves the
// tolerance window, after which the timestamp check refuses them anyway.
// It holds at most max ids.
type replayCache struct {
	mu    sync.Mutex
	max   int
	ids   map[replayKey]time.Time // id → remembered until
	order expiries                // the same, soonest first; may hold outdated entries
}

func newReplayCache(max int) *replayCache {
	return &replayCache{max: max, ids: map[replayKey]time.Time{}}
}

// add remembers k until until, unless it is already remembered
// (ErrReplayed) or the cache is full of unexpired ids (ErrReplayCacheFull).
func (c *replayCache) add(k replayKey, until, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(now)
	if _, ok := c.ids[k]; ok {
		return ErrReplayed
	}
	if len(c.ids) >= c.max {
		return ErrReplayCacheFull
	}
	c.ids[k] = until
	heap.Push(&c.order, expiry{k, until})
	if len(c.order) > 2*c.max {
		c.rebuild()
	}
	return nil
}

// forget drops k, for a delivery that was not taken after all, so the
// hub's retry of it is accepted.
func (c *replayCache) forget(k replayKey) {
	c.mu.Lock()
	delete(c.ids, k)
	c.mu.Unlock()
}

// expire drops the ids remembered until before now.
func (c *replayCache) expire(now time.Time) {
	for len(c.order) > 0 && c.order[0].until.Before(now) {
		e := heap.Pop(&c.order).(expiry)
		if until, ok := c.ids[e.key]; ok && until.Equal(e.until) {
			delete(c.ids, e.key)
		}
	}
}

// rebuild drops the heap's outdated entries (ids forgotten or re-added).
func (c *replayCache) rebuild() {
	c.order = c.order[:0]
	for k, until := range c.ids {
		c.order = append(c.order, expiry{k, until})
	}
	heap.Init(&c.order)
}

type expiry struct {
	key   replayKey
	until time.Time
}

// expiries is a min-heap of expiry by until.
type expiries []expiry

func (h expiries) Len() int           { return len(h) }
func (h expiries) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiries) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
