package delivery

import (
	"context"
	"fmt"
	"sync"
)

// DefaultPerHost is the default number of concurrent requests to one
// callback host.
const DefaultPerHost = 8

// hostLimit bounds the concurrent requests to each callback host with one
// semaphore per host. Semaphores exist only while someone holds or waits
// for them, so the map stays as small as the set of busy hosts.
type hostLimit struct {
	per   int
	mu    sync.Mutex
	hosts map[string]*hostSem
}

type hostSem struct {
	slots chan struct{}
	refs  int // holders and waiters
}

func newHostLimit(per int) *hostLimit {
	if per <= 0 {
		per = DefaultPerHost
	}
	return &hostLimit{per: per, hosts: map[string]*hostSem{}}
}

// acquire waits for a slot for host, or for ctx to end. The returned
// function gives the slot back; call it exactly once.
func (l *hostLimit) acquire(ctx context.Context, host string) (func(), error) {
	l.mu.Lock()
	s := l.hosts[host]
	if s == nil {
		s = &hostSem{slots: make(chan struct{}, l.per)}
		l.hosts[host] = s
	}
	s.refs++
	l.mu.Unlock()

	select {
	case s.slots <- struct{}{}:
		return func() {
			<-s.slots
			l.unref(host, s)
		}, nil
	case <-ctx.Done():
		l.unref(host, s)
		return nil, fmt.Errorf("delivery: waiting for a slot for host %s: %w", host, ctx.Err())
	}
}

func (l *hostLimit) unref(host string, s *hostSem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(l.hosts, host)
	}
}

// inUse returns the requests in flight to host.
func (l *hostLimit) inUse(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.hosts[host]; s != nil {
		return len(s.slots)
	}
	return 0
}
