package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// kindSSE is the fleetCmd.Kind of Server-Sent Events streams.
const kindSSE = "sse"

// connectSSE opens n Server-Sent Events streams to url, at most
// concurrency at a time, and returns once each has its first event (or
// one failed).
func (f *fleet) connectSSE(ctx context.Context, url string, n, concurrency int) (int, error) {
	var opened atomic.Int64
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, concurrency)
	for range n {
		sem <- struct{}{}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		fc := &fleetConn{cancel: cancel, done: make(chan struct{})}
		f.conns = append(f.conns, fc)
		idx := len(f.conns) - 1
		go func() {
			defer close(fc.done)
			err := readEvents(sctx, url, idx, func() { opened.Add(1); <-sem }, func(data []byte, now time.Time) {
				if id, sent, ok := parseMark(data); ok {
					if rc := f.current.Load(); rc != nil {
						rc.record(idx, id, sent, now)
					}
				}
			})
			if err != nil && sctx.Err() == nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("stream %d: %w", idx, err)
				}
				mu.Unlock()
			}
		}()
	}
	deadline := time.Now().Add(5 * time.Minute)
	for opened.Load() < int64(n) {
		mu.Lock()
		err := firstErr
		mu.Unlock()
		if err != nil {
			return int(opened.Load()), err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return int(opened.Load()), fmt.Errorf("%d of %d streams opened", opened.Load(), n)
		}
		time.Sleep(20 * time.Millisecond) // poll interval while streams open
	}
	return n, nil
}
