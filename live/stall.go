package live

import (
	"log/slog"
	"sync"
	"time"
)

// wsStalls counts the sessions whose replay waits for a failing log. It
// logs when the first one stalls and when the last one goes on, not once
// per session or attempt: an outage of the log stalls every session in
// replay at once.
type wsStalls struct {
	logger *slog.Logger
	mu     sync.Mutex
	n      int       // sessions stalled
	since  time.Time // when n became non-zero
	err    error     // the latest error
}

// add counts one more stalled session.
func (w *wsStalls) add(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	w.err = err
	if w.n == 1 {
		w.since = time.Now()
		w.logger.Warn("websocket: sessions cannot replay from the log; retrying with backoff", "err", err)
	}
}

// update records the latest error of a stalled session.
func (w *wsStalls) update(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

// remove counts one stalled session less.
func (w *wsStalls) remove() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n--
	if w.n == 0 {
		w.logger.Info("websocket: sessions replay from the log again", "stalled_for", time.Since(w.since).Round(time.Millisecond), "last_err", w.err)
		w.since, w.err = time.Time{}, nil
	}
}

// state reports whether no session is stalled, else since when some are
// and the latest error.
func (w *wsStalls) state() (ok bool, since time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n == 0, w.since, w.err
}
