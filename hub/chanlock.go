package hub

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// lockWait bounds how long intake waits for another request on the same
// channel before answering 503: a log that hangs makes publishers fail
// fast instead of queueing behind each other.
const lockWait = 15 * time.Second

// lockKey names one lock of the hub's one family of per-channel locks: a
// kind and a topic. A holder of a topic's fetch lock may take the same
// topic's commit lock, never the reverse (docs/ARCHITECTURE.md, lock order).
type lockKey struct {
	kind  lockKind
	topic string
}

type lockKind uint8

const (
	// commitLock guards a channel's intake: its working state, the
	// continuity rule and the append.
	commitLock lockKind = iota
	// fetchLock serialises fetching a topic (a thin ping, a followed
	// Source) and is held across the commit that follows.
	fetchLock
)

// commitKey is the lock of topic's intake.
func commitKey(topic string) lockKey { return lockKey{commitLock, topic} }

// fetchKey is the lock of fetching topic.
func fetchKey(topic string) lockKey { return lockKey{fetchLock, topic} }

// keyedLocks serialises work per key. An entry exists only while someone
// holds or waits for it, so the map is bounded by the requests in flight,
// not by the topics ever seen.
type keyedLocks[K comparable] struct {
	mu sync.Mutex
	m  map[K]*keyedLock
}

type keyedLock struct {
	held chan struct{} // one slot: full while held
	refs int           // holders and waiters
}

// lock takes key's lock, waiting at most until ctx ends, and returns the
// function that releases it.
func (k *keyedLocks[K]) lock(ctx context.Context, key K) (func(), error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[K]*keyedLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.m[key] = l
	}
	l.refs++
	k.mu.Unlock()
	select {
	case l.held <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-l.held
				k.release(key, l)
			})
		}, nil
	case <-ctx.Done():
		k.release(key, l)
		return nil, ctx.Err()
	}
}

// tryLock takes key's lock only when nobody holds or waits for it, and
// returns the function that releases it; ok is false when key is busy.
// Background work (eviction) uses it so as never to delay a request.
func (k *keyedLocks[K]) tryLock(key K) (unlock func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[K]*keyedLock{}
	}
	if _, busy := k.m[key]; busy {
		return nil, false
	}
	l := &keyedLock{held: make(chan struct{}, 1), refs: 1}
	l.held <- struct{}{}
	k.m[key] = l
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.held
			k.release(key, l)
		})
	}, true
}

func (k *keyedLocks[K]) release(key K, l *keyedLock) {
	k.mu.Lock()
	l.refs--
	if l.refs == 0 {
		delete(k.m, key)
	}
	k.mu.Unlock()
}

// lockChannel serialises work on one channel's key within the process. It waits at most lockWait (or until ctx ends) and then fails
// with an error the publish path answers with 503 and Retry-After.
func (h *Hub) lockChannel(ctx context.Context, key lockKey) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := h.chanLocks.lock(ctx, key)
	if err != nil {
		return nil, unavailable("the channel", fmt.Errorf("waiting for the channel's previous request: %w", err))
	}
	return unlock, nil
}

// lockSub takes the lock of subscription id, waiting at most until ctx
// ends, and returns the function that releases it. It is held from
// reading the subscription in the store to handing what was written to
// the delivery engine (Activator), so two changes of one subscription at
// once (a verification and an operator's rate, say) neither lose a write
// nor leave the engine with the older copy. A holder takes no other
// subscription's lock.
func (h *Hub) lockSub(ctx context.Context, id string) (func(), error) {
	return h.subLocks.lock(ctx, id)
}
