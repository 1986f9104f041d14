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
	// MaxPending bounds the records held between writes (default
	// defaultAttemptPending); beyond it new records are dropped and counted.
	MaxPending int
	Logger     *slog.Logger // default slog.Default()
}

// defaultAttemptPending is the default AttemptLogConfig.MaxPending.
const defaultAttemptPending = 8192

// AttemptLog takes the delivery engine's attempt records and writes them
// to the store in batches, off the delivery path: Record only appends to
// memory and never waits for the store. A subscription's records are held
// up to AttemptLogLen between writes (older ones would be trimmed by the
// store anyway); when MaxPending records are held, as when the store is
// slow or down, new ones are dropped and counted, and a failed write drops
// its batch and counts it. Deliveries are never held back or dropped.
type AttemptLog struct {
	w      AttemptWriter
	cfg    AttemptLogConfig
	logger *slog.Logger

	mu      sync.Mutex
	pending map[string][]Attempt // by SubID, oldest first
	held    int                  // records in pending

	written, dropped atomic.Uint64
}

// NewAttemptLog returns an AttemptLog writing to w; start it with Run.
func NewAttemptLog(w AttemptWriter, cfg AttemptLogConfig) *AttemptLog {
	if cfg.Flush <= 0 {
		cfg.Flush = time.Second
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = defaultAttemptPending
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	return &AttemptLog{w: w, cfg: cfg, logger: cfg.Logger, pending: map[string][]Attempt{}}
}

// Record takes one attempt for the next write. It never blocks on I/O.
func (l *AttemptLog) Record(a Attempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.pending[a.SubID]
	if len(list) >= 2*AttemptLogLen { // keep the newest AttemptLogLen
		n := copy(list, list[len(list)-AttemptLogLen:])
		clear(list[n:])
		l.held -= len(list) - n
		list = list[:n]
	}
	if l.held >= l.cfg.MaxPending {
		l.dropped.Add(1)
		l.pending[a.SubID] = list
		return
	}
	l.pending[a.SubID] = append(list, a)
	l.held++
}

// Stats returns how many records were written to the store and how many
// were dropped (buffer full or the store failing).
func (l *AttemptLog) Stats() (written, dropped uint64) {
	return l.written.Load(), l.dropped.Load()
}

// Run writes the records taken every Flush until ctx ends, then once more.
func (l *AttemptLog) Run(ctx context.Context) error {
	t := time.NewTicker(l.cfg.Flush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			l.Flush(fctx)
			cancel()
			return nil
		case <-t.C:
			l.Flush(ctx)
		}
	}
}

// Flush writes the records taken so far now.
func (l *AttemptLog) Flush(ctx context.Context) {
	l.mu.Lock()
	pending := l.pending
	if len(pending) == 0 {
		l.mu.Unlock()
		return
	}
	l.pending, l.held = map[string][]Attempt{}, 0
	l.mu.Unlock()
	batch := make([]Attempt, 0, len(pending))
	for _, list := range pending {
		batch = append(batch, list[max(0, len(list)-AttemptLogLen):]...)
	}
	if err := l.w.AddAttempts(ctx, batch); err != nil {
		l.dropped.Add(uint64(len(batch)))
		l.logger.Warn("attempt log: records dropped, the store did not take them", "records", len(batch), "err", err)
		return
	}
	l.written.Add(uint64(len(batch)))
}
