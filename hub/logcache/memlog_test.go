package logcache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// memLog is an in-memory hub.Log that counts the calls reaching it, so the
// tests can tell what the cache answered by itself.
type memLog struct {
	mu      sync.Mutex
	recs    []wire.Record // increasing Seq; removed records are gone
	last    uint64
	changed chan struct{}
	nexts   atomic.Int64
	probes  atomic.Int64 // Next calls made with a test's context (ctxT), not the follower's
	fail    atomic.Bool
	// hang makes the follower's next read go unanswered until its context
	// ends, as a read made while a stream has no leader does (once)
	hang atomic.Bool
}

func newMemLog() *memLog { return &memLog{changed: make(chan struct{})} }

func (l *memLog) Append(_ context.Context, rec wire.Record) (uint64, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	rec.Seq = l.last
	l.recs = append(l.recs, rec)
	close(l.changed)
	l.changed = make(chan struct{})
	return rec.Seq, false, nil
}

// appendQuiet appends without signalling Changed, like a writer whose
// signal was lost.
func (l *memLog) appendQuiet(rec wire.Record) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	rec.Seq = l.last
	l.recs = append(l.recs, rec)
	return rec.Seq
}

// removeThrough drops records up to seq, as retention would.
func (l *memLog) removeThrough(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.recs) > 0 && l.recs[0].Seq <= seq {
		l.recs = l.recs[1:]
	}
}

// probeKey marks a test's own calls, so counts exclude the follower's.
type probeKey struct{}

func (l *memLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	l.nexts.Add(1)
	if ctx.Value(probeKey{}) != nil {
		l.probes.Add(1)
	}
	if l.fail.Load() {
		return wire.Record{}, fmt.Errorf("memlog: down")
	}
	if ctx.Value(probeKey{}) == nil && l.hang.CompareAndSwap(true, false) {
		<-ctx.Done()
		return wire.Record{}, fmt.Errorf("memlog: unanswered: %w", ctx.Err())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.recs {
		if r.Seq >= seq && (channel == "" || r.Channel == channel) {
			return r, nil
		}
	}
	return wire.Record{}, fmt.Errorf("memlog: %w", hub.ErrNotFound)
}

func (l *memLog) Bounds(context.Context) (uint64, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == 0 {
		return 0, 0, nil
	}
	if len(l.recs) == 0 {
		return l.last + 1, l.last, nil
	}
	return l.recs[0].Seq, l.last, nil
}

func (l *memLog) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}
