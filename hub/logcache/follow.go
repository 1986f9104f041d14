package logcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
)

// batchSize is how many records the follower absorbs before it wakes the
// waiters of Changed, so that a burst is announced in steps.
const batchSize = 256

// Retry delays of the follower after an error of the underlying log.
const (
	minRetry = 50 * time.Millisecond
	maxRetry = 5 * time.Second
)

// Run follows the underlying log until ctx ends, then returns ctx's error.
// It starts at the log's last sequence (after loading Config.Preload older
// records), and on every change signal of the log, and every Config.Poll,
// reads the new records in order into the ring. Errors of the log are
// logged and retried with backoff. Run may be called once; after it
// returns the cache passes every call to the log.
func (c *Cache) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("logcache: Run called twice")
	}
	defer c.stop()
	retry := minRetry
	for {
		err := c.seed(ctx)
		if err == nil {
			break
		}
		if err := c.backoff(ctx, err, &retry); err != nil {
			return err
		}
	}
	poll := time.NewTicker(c.cfg.Poll)
	defer poll.Stop()
	retry = minRetry
	for {
		changed := c.log.Changed() // taken before reading: no lost signal
		if err := c.catchUp(ctx); err != nil {
			if err := c.backoff(ctx, err, &retry); err != nil {
				return err
			}
			continue
		}
		retry = minRetry
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-poll.C:
		}
	}
}

// seed positions the ring at the log's end, loads the preload window and
// makes the cache answer from memory.
func (c *Cache) seed(ctx context.Context) error {
	first, last, err := c.log.Bounds(ctx)
	if err != nil {
		return fmt.Errorf("logcache: seed: %w", err)
	}
	from := last + 1
	if c.cfg.Preload > 0 && last > 0 {
		from = max(first, last-min(last, uint64(c.cfg.Preload))+1, 1)
	}
	c.mu.Lock()
	c.lo, c.hi = from, from-1
	c.mu.Unlock()
	if from <= last {
		if err := c.catchUp(ctx); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.state = stateReady
	c.wakeLocked() // waiters that took Changed before Run now read from memory
	c.mu.Unlock()
	c.cfg.Logger.Debug("logcache: following", "from", from, "last", last)
	return nil
}

// catchUp reads every record after hi until the log has no more.
func (c *Cache) catchUp(ctx context.Context) error {
	c.mu.RLock()
	next := c.hi + 1
	c.mu.RUnlock()
	batch := make([]hub.Record, 0, 16)
	defer func() {
		if len(batch) > 0 {
			c.absorb(batch)
		}
	}()
	for {
		rec, err := c.log.Next(ctx, "", next)
		if errors.Is(err, hub.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("logcache: follow from %d: %w", next, err)
		}
		if rec.Seq < next {
			return fmt.Errorf("logcache: follow from %d: log returned %d", next, rec.Seq)
		}
		batch = append(batch, rec)
		next = rec.Seq + 1
		if len(batch) == batchSize {
			c.absorb(batch)
			batch = batch[:0]
		}
	}
}

// backoff logs err and waits before the next attempt, doubling *retry.
func (c *Cache) backoff(ctx context.Context, err error, retry *time.Duration) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.cfg.Logger.Warn("logcache: log error, retrying", "err", err, "in", *retry)
	t := time.NewTimer(*retry)
	defer t.Stop()
	*retry = min(2**retry, maxRetry)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// stop empties the ring and turns the cache into a pass-through, waking
// every waiter so it moves to the log's own signal.
func (c *Cache) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = stateStopped
	c.recs = deque[hub.Record]{}
	c.byChan = map[string]*deque[uint64]{}
	c.bytes = 0
	close(c.changed)
}
