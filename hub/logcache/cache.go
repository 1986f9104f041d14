package logcache

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// Defaults for Config.
const (
	DefaultMaxRecords = 8192
	DefaultMaxBytes   = 64 << 20
	DefaultPoll       = 5 * time.Second
	// RecordOverhead is what a cached record costs beyond its body and
	// strings: the record value in the ring and its channel index entry.
	RecordOverhead = 256
)

// Config bounds a Cache. Zero fields take the defaults.
type Config struct {
	// MaxRecords is the most records the ring holds; default 8192.
	MaxRecords int
	// MaxBytes is the most bytes (bodies, strings and RecordOverhead per
	// record) the ring holds; default 64 MiB.
	MaxBytes int64
	// Preload is how many of the log's newest records Run loads before it
	// starts answering from memory, at most MaxRecords. The default, 0,
	// starts the cache at the log's current last sequence.
	Preload int
	// Poll is how often Run reads the log even without a change signal, a
	// safety net for lost signals (a reconnecting NATS connection); default
	// 5s.
	Poll time.Duration
	// Logger receives the follower's errors; default slog.Default().
	Logger *slog.Logger
}

// state of a Cache.
const (
	stateIdle    = iota // Run not started yet: Next delegates
	stateReady          // Run follows the log: Next answers from memory
	stateStopped        // Run returned: Next and Changed delegate
)

// errNotFound is the answer of a caught-up Next; it wraps hub.ErrNotFound
// and is never modified.
var errNotFound = fmt.Errorf("logcache: caught up: %w", hub.ErrNotFound)

// Cache is a hub.Log that answers Next for recent records from a bounded
// in-memory ring filled by Run. It is safe for concurrent use.
type Cache struct {
	log hub.Log
	cfg Config
	h   *loophealth.Tracker // the follower's failing log calls

	running   atomic.Bool
	appended  atomic.Uint64 // highest sequence returned by Append through the cache
	hits      atomic.Uint64
	delegated atomic.Uint64

	mu      sync.RWMutex
	state   int
	lo, hi  uint64 // every log record with lo <= seq <= hi is in recs
	recs    deque[wire.Record]
	byChan  map[string]*deque[uint64] // sequences of each channel's records in recs
	evicted evictedIndex              // each channel's last record evicted from recs
	bytes   int64
	changed chan struct{}
}

var _ hub.Log = (*Cache)(nil)

// New returns a cache in front of log. It answers from memory only while
// Run is running; until then every call goes to log.
func New(log hub.Log, cfg Config) *Cache {
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = DefaultMaxRecords
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	cfg.Preload = min(max(cfg.Preload, 0), cfg.MaxRecords)
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &Cache{
		log:     log,
		cfg:     cfg,
		h:       loophealth.New(cfg.Logger),
		byChan:  map[string]*deque[uint64]{},
		changed: make(chan struct{}),
	}
}

// Append appends to the underlying log; Run then picks the record up. Until
// it has, Next still finds the record by asking the log, so a writer reads
// its own writes.
func (c *Cache) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) {
	seq, dup, err := c.log.Append(ctx, rec)
	if err != nil {
		return seq, dup, err
	}
	for {
		cur := c.appended.Load()
		if seq <= cur || c.appended.CompareAndSwap(cur, seq) {
			break
		}
	}
	return seq, dup, nil
}

// Next returns the first record of channel (any channel when channel is
// "") with a sequence of at least seq, or an error wrapping hub.ErrNotFound.
// A seq inside the ring is answered from memory, as is a seq after it when
// the ring holds everything the follower has seen, and a seq before the
// ring when no record of channel from seq on has left the ring; any other
// seq before the ring goes to the underlying log.
func (c *Cache) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	seq = max(seq, 1)
	c.mu.RLock()
	if c.state != stateReady || (seq < c.lo && !c.clearLocked(channel, seq)) {
		c.mu.RUnlock()
		c.delegated.Add(1)
		return c.log.Next(ctx, channel, seq)
	}
	seq = max(seq, c.lo)
	if seq <= c.hi {
		if rec, ok := c.find(channel, seq); ok {
			c.mu.RUnlock()
			c.hits.Add(1)
			return rec, nil
		}
	}
	hi := c.hi
	c.mu.RUnlock()
	if c.appended.Load() > hi {
		// Appended through this cache but not absorbed yet.
		c.delegated.Add(1)
		return c.log.Next(ctx, channel, max(seq, hi+1))
	}
	c.hits.Add(1)
	return wire.Record{}, errNotFound
}

// clearLocked reports whether every record of channel from seq on that
// the follower has seen is still in the ring. The caller holds mu.
func (c *Cache) clearLocked(channel string, seq uint64) bool {
	return seq >= c.lo || (channel != "" && c.evicted.clear(channel, seq))
}

// find returns the first record of channel at or after seq in the ring.
// The caller holds mu.
func (c *Cache) find(channel string, seq uint64) (wire.Record, bool) {
	if channel != "" {
		q := c.byChan[channel]
		if q == nil {
			return wire.Record{}, false
		}
		j := q.search(func(s *uint64) bool { return *s >= seq })
		if j == q.len() {
			return wire.Record{}, false
		}
		seq = *q.at(j)
	}
	n := c.recs.len()
	if n == 0 {
		return wire.Record{}, false
	}
	// Sequences are usually contiguous: try the direct position first.
	if d := seq - c.recs.front().Seq; seq >= c.recs.front().Seq && d < uint64(n) && c.recs.at(int(d)).Seq == seq {
		return *c.recs.at(int(d)), true
	}
	i := c.recs.search(func(r *wire.Record) bool { return r.Seq >= seq })
	if i == n {
		return wire.Record{}, false
	}
	return *c.recs.at(i), true
}

// Bounds returns the underlying log's bounds.
func (c *Cache) Bounds(ctx context.Context) (uint64, uint64, error) {
	return c.log.Bounds(ctx)
}

// Epoch returns the underlying log's identity when it has one (as
// jslog.Log does), else "".
func (c *Cache) Epoch() string {
	if e, ok := c.log.(interface{ Epoch() string }); ok {
		return e.Epoch()
	}
	return ""
}

// Changed returns a channel closed after the cache has absorbed new records
// (or when Run starts or stops). While Run is not running it never closes
// before Run starts; after Run has returned it is the log's own signal.
func (c *Cache) Changed() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.state == stateStopped {
		return c.log.Changed()
	}
	return c.changed
}

// Stats is a snapshot of a cache's contents and traffic.
type Stats struct {
	Records   int    // records in the ring
	Bytes     int64  // their accounted size
	First     uint64 // the ring answers Next from memory for seq >= First
	Last      uint64 // highest sequence absorbed
	Hits      uint64 // Next calls answered from memory
	Delegated uint64 // Next calls passed to the underlying log
}

// Stats returns the cache's counters, for metrics and tests.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{
		Records: c.recs.len(), Bytes: c.bytes, First: c.lo, Last: c.hi,
		Hits: c.hits.Load(), Delegated: c.delegated.Load(),
	}
}

// Offer absorbs rec, a record this process has just appended to the log,
// as read from it (jslog.Log.OnAppend), when it is the next record the
// cache follows: the appender's readers are woken without the cache
// reading the record back from the log first. Any other record is left
// for Run to read in its turn. Offer never blocks on the log.
func (c *Cache) Offer(rec wire.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateReady || rec.Seq != c.hi+1 {
		return
	}
	c.absorbLocked([]wire.Record{rec})
}

// absorb adds records with increasing sequences after hi, evicts the oldest
// beyond the bounds, and wakes the waiters of Changed.
func (c *Cache) absorb(batch []wire.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.absorbLocked(batch)
}

// absorbLocked is absorb with mu held.
func (c *Cache) absorbLocked(batch []wire.Record) {
	for _, rec := range batch {
		if rec.Seq <= c.hi {
			continue
		}
		c.recs.push(rec)
		q := c.byChan[rec.Channel]
		if q == nil {
			q = &deque[uint64]{}
			c.byChan[rec.Channel] = q
		}
		q.push(rec.Seq)
		c.bytes += size(&rec)
		c.hi = rec.Seq
		for c.recs.len() > 0 && (c.recs.len() > c.cfg.MaxRecords || c.bytes > c.cfg.MaxBytes) {
			c.evict()
		}
	}
	if c.state == stateReady { // a start wakes its waiters once ready
		c.wakeLocked()
	}
}

// evict removes the oldest record. The caller holds mu.
func (c *Cache) evict() {
	old := c.recs.pop()
	c.bytes -= size(&old)
	q := c.byChan[old.Channel]
	q.pop()
	if q.len() == 0 {
		delete(c.byChan, old.Channel)
	}
	c.evicted.note(old.Channel, old.Seq)
	c.lo = old.Seq + 1
}

// wakeLocked closes the current change channel. The caller holds mu.
func (c *Cache) wakeLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// size is the accounted memory of a cached record.
func size(r *wire.Record) int64 {
	return RecordOverhead + int64(len(r.Body)+len(r.Topic)+len(r.Channel)+
		len(r.ContentType)+len(r.ResourceSync)+len(r.Key))
}
