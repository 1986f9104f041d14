package logcache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// batchSize is how many records the follower absorbs before it wakes the
// waiters of Changed, so that a burst is announced in steps.
const batchSize = 256

// Operations of the follower whose failures its health follows.
const (
	opSeed   = "logcache: finding the log's end"
	opFollow = "logcache: following the log"
)

// Run follows the underlying log until ctx ends, then returns ctx's error.
// It starts at the log's last sequence (after loading Config.Preload older
// records), and on every change signal of the log, and every Config.Poll,
// reads the new records in order into the ring.
//
// A log that fails (a lost connection, a restarting server) does not end
// Run: it retries with backoff, logging when the log starts failing and
// when it works again, and goes on from the last record it absorbed, so
// the cache catches up; Health tells whether it is stalled. Meanwhile
// readers are answered from what the ring holds. Run may be called once;
// after it returns the cache passes every call to the log.
func (c *Cache) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("logcache: Run called twice")
	}
	defer c.stop()
	positioned := false
	if !c.h.Do(ctx, opSeed, func() error { return c.seed(ctx, &positioned) }) {
		return ctx.Err()
	}
	poll := time.NewTicker(c.cfg.Poll)
	defer poll.Stop()
	for {
		changed := c.log.Changed() // taken before reading: no lost signal
		if c.h.Report(ctx, opFollow, c.catchUpOrAgain(ctx)) != nil {
			// an append (the log answers again) ends the wait: readiness
			// follows the log, not the retry's pace
			t := time.NewTimer(c.h.RetryIn(opFollow, loophealth.EngineRetry))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-changed:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-poll.C:
		}
	}
}

// seed positions the ring at the log's end, loads the preload window and
// makes the cache answer from memory. After a failure it is called again
// and goes on loading from where the failed attempt stopped.
func (c *Cache) seed(ctx context.Context, positioned *bool) error {
	if !*positioned {
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
		c.evicted.reset(from)
		c.mu.Unlock()
		*positioned = true
		c.cfg.Logger.Debug("logcache: following", "from", from, "last", last)
	}
	if err := c.catchUp(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.state = stateReady
	c.wakeLocked() // waiters that took Changed before Run now read from memory
	c.mu.Unlock()
	return nil
}

// staleReadAfter is how long a read of catchUp may go without a record
// before an append the log took meanwhile makes catchUpOrAgain ask again.
const staleReadAfter = time.Second

// catchUpOrAgain is catchUp, asked again when its read has brought no
// record for staleReadAfter while the log took an append: a read made
// while the stream had no leader (a NATS node lost) is never answered, and
// waiting out its timeout would keep the cache, and the readiness that
// follows it, stalled seconds after the log is back. A read that brings
// records is never cut; what one cut absorbed stays, and the next goes on
// after it.
func (c *Cache) catchUpOrAgain(ctx context.Context) error {
	for {
		changed := c.log.Changed()
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.catchUp(rctx) }()
		err, again := c.awaitRead(ctx, done, changed)
		cancel()
		if again {
			<-done
			continue
		}
		return err
	}
}

// awaitRead waits for a catchUp's end (done); again reports that the read
// brought nothing for staleReadAfter and the log changed (changed), so the
// caller cuts it and asks again.
func (c *Cache) awaitRead(ctx context.Context, done <-chan error, changed <-chan struct{}) (err error, again bool) {
	t := time.NewTimer(staleReadAfter)
	defer t.Stop()
	last := c.last()
	for {
		select {
		case err := <-done:
			return err, false
		case <-ctx.Done():
			return <-done, false
		case <-t.C:
		}
		if hi := c.last(); hi != last {
			last = hi // records arrive: not stale
			t.Reset(staleReadAfter)
			continue
		}
		select {
		case err := <-done:
			return err, false
		case <-changed:
			return nil, true
		case <-ctx.Done():
			return <-done, false
		}
	}
}

// last is the last sequence the ring holds.
func (c *Cache) last() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.hi
}

// catchUp reads every record after hi until the log has no more: with the
// log's range read when it has one (a preload of thousands of records in
// a few fetches), one Next per record otherwise.
func (c *Cache) catchUp(ctx context.Context) error {
	c.mu.RLock()
	next := c.hi + 1
	c.mu.RUnlock()
	batch := make([]wire.Record, 0, 16)
	defer func() {
		if len(batch) > 0 {
			c.absorb(batch)
		}
	}()
	add := func(rec wire.Record) error {
		if rec.Seq < next {
			return fmt.Errorf("log returned %d", rec.Seq)
		}
		batch = append(batch, rec)
		next = rec.Seq + 1
		if len(batch) == batchSize {
			c.absorb(batch)
			batch = batch[:0]
		}
		return nil
	}
	from := next
	var err error
	if rl, ok := c.log.(rangeReader); ok {
		err = rl.Range(ctx, "", from, math.MaxUint64, add)
	} else {
		err = hub.Walk(ctx, c.log, "", from, math.MaxUint64, add)
	}
	if err != nil {
		return fmt.Errorf("logcache: follow from %d: %w", from, err)
	}
	return nil
}

// Health reports whether the follower keeps up with the log: false when
// reading the log has been failing since since, with the latest error. The
// follower retries by itself; Health is for readiness checks. It does no
// I/O.
func (c *Cache) Health() (ok bool, since time.Time, err error) { return c.h.State() }

// stop empties the ring and turns the cache into a pass-through, waking
// every waiter so it moves to the log's own signal.
func (c *Cache) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = stateStopped
	c.recs = deque[wire.Record]{}
	c.byChan = map[string]*deque[uint64]{}
	c.evicted = evictedIndex{}
	c.bytes = 0
	close(c.changed)
}
