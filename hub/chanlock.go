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

// keyedLocks serialises work per key (a channel's topic). An entry exists
// only while someone holds or waits for it, so the map is bounded by the
// requests in flight, not by the topics ever seen.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
}

type keyedLock struct {
	held chan struct{} // one slot: full while held
	refs int           // holders and waiters
}

// lock takes key's lock, waiting at most until ctx ends, and returns the
// function that releases it.
func (k *keyedLocks) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedLock{}
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
func (k *keyedLocks) tryLock(key string) (unlock func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]*keyedLock{}
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

func (k *keyedLocks) release(key string, l *keyedLock) {
	k.mu.Lock()
	l.refs--
	if l.refs == 0 {
		delete(k.m, key)
	}
	k.mu.Unlock()
}

// size reports how many keys have a holder or a waiter.
func (k *keyedLocks) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// lockChannel serialises work on one channel (or any key) within the
// process. It waits at most lockWait (or until ctx ends) and then fails
// with an error the publish path answers with 503 and Retry-After.
func (h *Hub) lockChannel(ctx context.Context, key string) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := h.chanLocks.lock(ctx, key)
	if err != nil {
		return nil, unavailable("the channel", fmt.Errorf("waiting for the channel's previous request: %w", err))
	}
	return unlock, nil
}
