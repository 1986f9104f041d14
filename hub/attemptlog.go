package hub

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// AttemptWriter is where an AttemptLog writes; every Store is one.
type AttemptWriter interface {
	AddAttempts(ctx context.Context, as []Attempt) error
}

// AttemptLogConfig configures an AttemptLog. Zero fields take the defaults
// named on each.
type AttemptLogConfig struct {
	// Flush is how often the records taken are written (default 1s).
	Flush time.Duration
	// Hold is how long a subscription whose records are all first
	// attempts that delivered may wait for its write (default 5s): a
	// failed attempt, or a retry, is written at the next Flush; a healthy
	// subscription's log once Hold has passed since its oldest record
	// held, or earlier when half of MaxPending is held. A subscription
	// delivering steadily so costs one store write per Hold, of its newest
	// AttemptLogLen records, instead of one per Flush. Negative: every
	// Flush writes everything.
	Hold time.Duration
	// MaxPending bounds the records held between writes (default
	// defaultAttemptPending); beyond it new records are dropped and counted.
	MaxPending int
	Logger     *slog.Logger // default slog.Default()
}

// Defaults of AttemptLogConfig.
const (
	defaultAttemptPending = 65536 // MaxPending: ≈ 8 MB of records at most
	defaultAttemptHold    = 5 * time.Second
)

// AttemptLog takes the delivery engine's attempt records and writes them
// to the store in batches, off the delivery path: Record only appends to
// memory and never waits for the store, under one of several locks, so
// the queues delivering at once seldom wait for one another. A
// subscription's newest AttemptLogLen to twice that records are held
// between writes (older ones would be trimmed by the store anyway); when MaxPending records are held, as when the store is
// slow or down, new ones are dropped and counted, and a failed write drops
// its batch and counts it. Deliveries are never held back or dropped.
type AttemptLog struct {
	w      AttemptWriter
	cfg    AttemptLogConfig
	logger *slog.Logger

	shards [attemptShards]attemptShard // by a hash of SubID
	held   atomic.Int64                // records in the shards
	// lastBatch is the size of the last batch taken, the next one's
	// capacity.
	lastBatch atomic.Int64

	written, dropped atomic.Uint64
}

// attemptShards is how many locks the records are held under.
const attemptShards = 16

// attemptShard is the records of some subscriptions waiting for a write.
type attemptShard struct {
	mu      sync.Mutex
	pending map[string]*heldAttempts // by SubID
}

// shard returns the shard of subID (FNV-1a).
func (l *AttemptLog) shard(subID string) *attemptShard {
	h := uint32(2166136261)
	for i := 0; i < len(subID); i++ {
		h = (h ^ uint32(subID[i])) * 16777619
	}
	return &l.shards[h%attemptShards]
}

// NewAttemptLog returns an AttemptLog writing to w; start it with Run.
func NewAttemptLog(w AttemptWriter, cfg AttemptLogConfig) *AttemptLog {
	if cfg.Flush <= 0 {
		cfg.Flush = time.Second
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = defaultAttemptPending
	}
	cfg.Hold = cmp.Or(cfg.Hold, defaultAttemptHold)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	l := &AttemptLog{w: w, cfg: cfg, logger: cfg.Logger}
	for i := range l.shards {
		l.shards[i].pending = map[string]*heldAttempts{}
	}
	return l
}

// heldAttempts are the records of one subscription waiting for a write.
// A flush empties it and keeps it, its array reused by the next records,
// until a flush finds it still empty (take) and drops it.
type heldAttempts struct {
	list    []Attempt // oldest first
	since   time.Time // when the oldest was taken; when emptied, while empty
	failed  bool      // one of them is not a first attempt that delivered
	dropped bool      // no longer in its shard: a SubAttempts holding it looks again
}

// due reports whether h is written by a flush at now, holding for hold.
func (h *heldAttempts) due(now time.Time, hold time.Duration) bool {
	return h.failed || now.Sub(h.since) >= hold
}

// Record takes one attempt for a later write. It never blocks on I/O.
func (l *AttemptLog) Record(a Attempt) {
	s := l.shard(a.SubID)
	s.mu.Lock()
	defer s.mu.Unlock()
	l.appendLocked(l.heldLocked(s, a.SubID), a)
}

// SubAttempts records the attempts of one subscription in an AttemptLog
// as Record does, without looking the subscription up each time: its
// shard and its held records are found once and kept while the log keeps
// them. One goroutine at a time uses it.
type SubAttempts struct {
	l  *AttemptLog
	s  *attemptShard
	id string
	h  *heldAttempts // under s.mu
}

// For returns the recorder of subID's attempts.
func (l *AttemptLog) For(subID string) *SubAttempts {
	return &SubAttempts{l: l, s: l.shard(subID), id: subID}
}

// Record takes one attempt of the subscription (a.SubID is its ID) for a
// later write. It never blocks on I/O.
func (r *SubAttempts) Record(a Attempt) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.h == nil || r.h.dropped {
		r.h = r.l.heldLocked(r.s, r.id)
	}
	r.l.appendLocked(r.h, a)
}

// heldLocked returns the held records of subID in s, made when it has
// none; s.mu is held.
func (l *AttemptLog) heldLocked(s *attemptShard, subID string) *heldAttempts {
	h := s.pending[subID]
	if h == nil {
		h = &heldAttempts{}
		s.pending[subID] = h
	}
	return h
}

// appendLocked adds a to h, keeping its newest AttemptLogLen to twice
// that, unless MaxPending records are held; its shard's mu is held.
func (l *AttemptLog) appendLocked(h *heldAttempts, a Attempt) {
	if len(h.list) == 0 {
		h.since = time.Now()
	}
	if len(h.list) >= 2*AttemptLogLen { // keep the newest AttemptLogLen
		n := copy(h.list, h.list[len(h.list)-AttemptLogLen:])
		clear(h.list[n:])
		l.held.Add(-int64(len(h.list) - n))
		h.list = h.list[:n]
	}
	if l.held.Load() >= int64(l.cfg.MaxPending) {
		l.dropped.Add(1)
		return
	}
	h.list = append(h.list, a)
	h.failed = h.failed || a.Attempt > 1 || a.Error != "" || a.Status < 200 || a.Status > 299
	l.held.Add(1)
}

// Stats returns how many records were written to the store and how many
// were dropped (buffer full or the store failing).
func (l *AttemptLog) Stats() (written, dropped uint64) {
	return l.written.Load(), l.dropped.Load()
}

// Run writes the records taken every Flush, those held for Hold included
// (heldAttempts.due), until ctx ends, then every record held. A write is
// not cut by ctx, which would drop its batch, but bounded to
// attemptWriteTimeout.
func (l *AttemptLog) Run(ctx context.Context) error {
	t := time.NewTicker(l.cfg.Flush)
	defer t.Stop()
	write := func(batch []Attempt) {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), attemptWriteTimeout)
		l.write(wctx, batch)
		cancel()
	}
	for {
		select {
		case <-ctx.Done():
			write(l.take(time.Now(), -1))
			return nil
		case <-t.C:
			write(l.take(time.Now(), max(l.cfg.Hold, 0)))
		}
	}
}

// attemptWriteTimeout bounds one write of the attempt log.
const attemptWriteTimeout = 5 * time.Second

// Flush writes every record taken so far now.
func (l *AttemptLog) Flush(ctx context.Context) { l.write(ctx, l.take(time.Now(), -1)) }

// take removes the records due at now, holding healthy subscriptions for
// hold (all when hold < 0), and returns the newest AttemptLogLen of each
// subscription. When half of MaxPending is held, it takes subscriptions
// not due as well until a quarter is left. A subscription emptied keeps
// its array for its next records, so one delivering steadily reuses it;
// one found empty a hold after it was emptied is dropped, and hold < 0
// (Flush, a stop) drops every one.
func (l *AttemptLog) take(now time.Time, hold time.Duration) []Attempt {
	over := 0 // records to take beyond those due
	if held, maxHeld := int(l.held.Load()), l.cfg.MaxPending; 2*held >= maxHeld {
		over = held - maxHeld/4
	}
	last := int(l.lastBatch.Load())
	batch := make([]Attempt, 0, min(last+last/4, int(l.held.Load()))) // in steady state, made once
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, h := range s.pending {
			switch {
			case hold < 0 || h.due(now, hold):
			case over > 0:
				over -= len(h.list)
			default:
				continue
			}
			if len(h.list) == 0 || hold < 0 {
				delete(s.pending, id)
				h.dropped = true
			}
			batch = append(batch, h.list[max(0, len(h.list)-AttemptLogLen):]...)
			l.held.Add(-int64(len(h.list)))
			clear(h.list)
			h.list, h.since, h.failed = h.list[:0], now, false
		}
		s.mu.Unlock()
	}
	l.lastBatch.Store(int64(len(batch)))
	return batch
}

// write hands batch to the store, counting it written or dropped.
func (l *AttemptLog) write(ctx context.Context, batch []Attempt) {
	if len(batch) == 0 {
		return
	}
	if err := l.w.AddAttempts(ctx, batch); err != nil {
		l.dropped.Add(uint64(len(batch)))
		l.logger.Warn("attempt log: records dropped, the store did not take them", "records", len(batch), "err", err)
		return
	}
	l.written.Add(uint64(len(batch)))
}
