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
	// A first attempt that delivered is held in 32 bytes (heldRecord),
	// any other in an Attempt of up to about 1.7 KB, written at the next
	// Flush.
	MaxPending int
	Logger     *slog.Logger // default slog.Default()
}

// Defaults of AttemptLogConfig.
const (
	defaultAttemptPending = 1 << 19 // MaxPending: 16 MB of healthy records at most
	defaultAttemptHold    = 5 * time.Second
)

// Bounds of the hold of a big hub: when more subscriptions are held than
// attemptPutRate times Hold, a flush holds healthy ones for
// held/attemptPutRate instead, up to attemptHoldMax, so that the store
// takes about attemptPutRate writes a second however many subscriptions
// deliver, each holding more records. A write costs about as much as
// eight records in it (BenchmarkStore_AddAttempts).
const (
	attemptPutRate = 1000
	attemptHoldMax = 15 * time.Second
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
// A flush finds the ones due without looking at the others: those whose
// hold may be over are the front of byAge, and those with a failed record
// are in failing. On a big hub the held subscriptions are many more than
// those due at one flush (each is held for Hold, then kept empty for
// another Hold), and looking at each one every Flush cost more than
// writing it.
type attemptShard struct {
	mu      sync.Mutex
	pending map[string]*heldAttempts // by SubID
	// byAge is the held subscriptions in the order their since was set,
	// oldest first from head on, each with the stamp it had then: one
	// whose stamp has moved since (set again) or that was dropped is
	// skipped. A since set with a flush's now can be a little older than
	// one set just before it by a record: that one is taken a little late,
	// never early.
	byAge   []agedHeld
	head    int
	failing []*heldAttempts // turned failed since the last flush
}

// agedHeld is a subscription's held records as byAge lists them.
type agedHeld struct {
	h     *heldAttempts
	stamp uint64
}

// stampLocked sets h.since to t and lists h at the back of byAge; s.mu is
// held.
func (s *attemptShard) stampLocked(h *heldAttempts, t time.Time) {
	h.since = t
	h.stamp++
	s.byAge = append(s.byAge, agedHeld{h: h, stamp: h.stamp})
}

// popDueLocked returns the next subscription of byAge whose hold is over
// at now, or nil; s.mu is held.
func (s *attemptShard) popDueLocked(now time.Time, hold time.Duration) *heldAttempts {
	for s.head < len(s.byAge) {
		e := s.byAge[s.head]
		live := e.stamp == e.h.stamp && !e.h.dropped
		if live && !e.h.due(now, hold) {
			return nil
		}
		s.byAge[s.head] = agedHeld{}
		if s.head++; s.head > len(s.byAge)/2 { // the head passes every element within about a Hold
			n := copy(s.byAge, s.byAge[s.head:])
			clear(s.byAge[n:])
			s.byAge, s.head = s.byAge[:n], 0
		}
		if live {
			return e.h
		}
	}
	return nil
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

// Record takes one attempt for a later write. It never blocks on I/O.
func (l *AttemptLog) Record(a Attempt) {
	s := l.shard(a.SubID)
	s.mu.Lock()
	defer s.mu.Unlock()
	l.appendLocked(s, l.heldLocked(s, a.SubID), a)
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
	r.l.appendLocked(r.s, r.h, a)
}

// heldLocked returns the held records of subID in s, made when it has
// none; s.mu is held.
func (l *AttemptLog) heldLocked(s *attemptShard, subID string) *heldAttempts {
	h := s.pending[subID]
	if h == nil {
		h = &heldAttempts{id: subID}
		s.pending[subID] = h
	}
	return h
}

// appendLocked adds a to h, held in s, keeping its newest AttemptLogLen to
// twice that, unless MaxPending records are held; s.mu is held.
func (l *AttemptLog) appendLocked(s *attemptShard, h *heldAttempts, a Attempt) {
	if h.len() >= 2*AttemptLogLen { // keep the newest AttemptLogLen
		l.held.Add(-int64(h.trim(AttemptLogLen)))
	}
	if l.held.Load() >= int64(l.cfg.MaxPending) {
		l.dropped.Add(1)
		if h.stamp == 0 { // new, and empty: dropped a hold later unless a record is kept meanwhile
			s.stampLocked(h, time.Now())
		}
		return
	}
	if h.len() == 0 {
		s.stampLocked(h, time.Now())
	}
	h.add(a)
	if !h.failed && (a.Attempt > 1 || a.Error != "" || a.Status < 200 || a.Status > 299) {
		h.failed = true
		s.failing = append(s.failing, h)
	}
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
			write(l.take(time.Now(), l.hold()))
		}
	}
}

// hold is how long a flush holds healthy subscriptions: Hold, or longer
// on a hub holding more than attemptPutRate times Hold of them (see
// attemptPutRate); 0 when Hold is negative.
func (l *AttemptLog) hold() time.Duration {
	if l.cfg.Hold <= 0 {
		return 0
	}
	subs := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		subs += len(s.pending)
		s.mu.Unlock()
	}
	return max(l.cfg.Hold, min(attemptHoldMax, time.Duration(subs)*time.Second/attemptPutRate))
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
// (Flush, a stop) drops every one. Only then, and under pressure, does it
// look at every subscription held; else at those due (attemptShard).
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
		if hold < 0 || over > 0 {
			for _, h := range s.pending {
				switch {
				case hold < 0 || h.due(now, hold):
				case over > 0:
					over -= h.len()
				default:
					continue
				}
				batch = l.takeLocked(s, h, now, hold < 0, batch)
			}
		} else {
			for _, h := range s.failing {
				if h.failed && !h.dropped {
					batch = l.takeLocked(s, h, now, false, batch)
				}
			}
			for h := s.popDueLocked(now, hold); h != nil; h = s.popDueLocked(now, hold) {
				batch = l.takeLocked(s, h, now, false, batch)
			}
		}
		clear(s.failing)
		s.failing = s.failing[:0]
		s.mu.Unlock()
	}
	l.lastBatch.Store(int64(len(batch)))
	return batch
}

// takeLocked appends the newest AttemptLogLen records of h to batch and
// empties h, keeping it for its next records unless it was empty already
// or drop; s.mu is held.
func (l *AttemptLog) takeLocked(s *attemptShard, h *heldAttempts, now time.Time, drop bool, batch []Attempt) []Attempt {
	if h.len() == 0 || drop {
		delete(s.pending, h.id)
		h.dropped = true
	}
	batch = h.appendTo(batch, AttemptLogLen)
	l.held.Add(-int64(h.len()))
	h.empty()
	h.failed = false
	if !h.dropped {
		s.stampLocked(h, now)
	}
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
