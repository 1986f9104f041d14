package delivery

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Subscription delivery states reported in SubStats.State.
const (
	StateStarting    = "starting"     // queue started, cursor not read yet
	StateActive      = "active"       // delivering or caught up; the last attempt succeeded
	StateFailing     = "failing"      // the last attempt failed; retrying
	StateCircuitOpen = "circuit-open" // held back by the callback host's circuit breaker
	StateStandby     = "standby"      // another hub holds the delivery claim
	StateStopped     = "stopped"      // lease ended or subscription gone
	StateStalled     = "stalled"      // the store or the log fails; retrying with backoff
)

// SubStats is the delivery health of one subscription with a running
// queue on this engine.
type SubStats struct {
	ID          string `json:"id"`
	Topic       string `json:"topic"`
	Channel     string `json:"channel"` // the channel's name
	Callback    string `json:"callback"`
	State       string `json:"state"`
	Host        string `json:"host"`
	HostBreaker string `json:"hostBreaker"` // closed, open or half-open
	// CallbackBreaker is the circuit breaker of the subscription's
	// callback, which its failed answers count against (isolate.go); set
	// by the engine's stats (a pointer: a queue keeps its SubStats, and
	// its size counts, queue_log_test.go).
	CallbackBreaker *BreakerStats `json:"callbackBreaker,omitempty"`
	LastStatus      int           `json:"lastStatus"` // 0: none yet, or a transport error
	LastError       string        `json:"lastError,omitempty"`
	// Stalled is the store or log error the queue is retrying when State
	// is StateStalled.
	Stalled             string     `json:"stalled,omitempty"`
	LastAttempt         time.Time  `json:"lastAttempt,omitzero"`
	LastSuccess         time.Time  `json:"lastSuccess,omitzero"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	Cursor              hub.Cursor `json:"cursor"`
	// Backlog is 0 when the queue has caught up with its channel;
	// otherwise it is the log's last sequence minus the cursor, an upper
	// bound that counts the records of every channel, since sequences are
	// shared by all channels.
	Backlog     uint64    `json:"backlog"`
	DeadLetters int       `json:"deadLetters"`
	Expires     time.Time `json:"expires,omitzero"`
}

// queueStats is what a queue keeps of its SubStats: the fields its
// attempts, cursor and dead letters change. Its names and expiry are its
// subscription's and its host and what statOf adds are read as asked
// (subStatsLocked), 144 bytes fewer per queue than a whole SubStats (the
// queue fits the 768-byte size class instead of the 896-byte one).
type queueStats struct {
	State                    string
	LastStatus               int
	LastError                string
	LastAttempt, LastSuccess time.Time
	ConsecutiveFailures      int
	Cursor                   hub.Cursor
	DeadLetters              int
}

// subStatsLocked returns q's SubStats as kept, with its subscription's
// names and expiry; q.mu is held.
func (q *queue) subStatsLocked() SubStats {
	k := q.stats
	return SubStats{
		ID: q.id, Topic: q.sub.Topic, Channel: q.sub.Channel, Callback: q.sub.Callback, Expires: q.sub.Expires,
		State: k.State, LastStatus: k.LastStatus, LastError: k.LastError, LastAttempt: k.LastAttempt, LastSuccess: k.LastSuccess,
		ConsecutiveFailures: k.ConsecutiveFailures, Cursor: k.Cursor, DeadLetters: k.DeadLetters,
	}
}

// keptStats is what a queue keeps of s.
func keptStats(s SubStats) queueStats {
	return queueStats{
		State: s.State, LastStatus: s.LastStatus, LastError: s.LastError, LastAttempt: s.LastAttempt, LastSuccess: s.LastSuccess,
		ConsecutiveFailures: s.ConsecutiveFailures, Cursor: s.Cursor, DeadLetters: s.DeadLetters,
	}
}

// Stats returns the delivery health of every subscription with a running
// queue, ordered by ID. It does no I/O, but walks every queue: Stat,
// Failing and StateCounts answer without doing so.
func (w *Webhooks) Stats() []SubStats {
	w.mu.Lock()
	qs := make([]*queue, 0, len(w.queues))
	for _, q := range w.queues {
		qs = append(qs, q)
	}
	w.mu.Unlock()
	return w.statsOf(qs)
}

// StatsPage returns the delivery health of at most limit of the
// subscriptions with a running queue, those with the smallest IDs greater
// than after, ordered by ID, and whether more follow. It does no I/O; it
// looks at every queue's ID once, but sorts and reads the health of the
// page's queues only.
func (w *Webhooks) StatsPage(after string, limit int) (page []SubStats, more bool) {
	limit = max(limit, 1)
	var sel idHeap // the limit+1 smallest IDs after after, largest on top
	w.mu.Lock()
	for id, q := range w.queues {
		if id <= after {
			continue
		}
		if len(sel) <= limit {
			heap.Push(&sel, q)
		} else if id < sel[0].id {
			sel[0] = q
			heap.Fix(&sel, 0)
		}
	}
	w.mu.Unlock()
	if more = len(sel) > limit; more {
		heap.Pop(&sel) // the first ID of the next page
	}
	return w.statsOf(sel), more
}

// idHeap is a max-heap of queues by ID.
type idHeap []*queue

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i].id > h[j].id }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(*queue)) }
func (h *idHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	*h = old[:len(old)-1]
	return q
}

// Stat returns the delivery health of the subscription id, and whether
// this engine runs its queue.
func (w *Webhooks) Stat(id string) (SubStats, bool) {
	q := w.queueFor(id)
	if q == nil {
		return SubStats{}, false
	}
	return w.statOf(q, w.lastSeq.Load(), w.cfg.Clock()), true
}

// statsOf returns the stats of qs ordered by ID.
func (w *Webhooks) statsOf(qs []*queue) []SubStats {
	last := w.lastSeq.Load()
	now := w.cfg.Clock()
	out := make([]SubStats, 0, len(qs))
	for _, q := range qs {
		out = append(out, w.statOf(q, last, now))
	}
	slices.SortFunc(out, func(a, b SubStats) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// statOf returns the stats of q, its state refined by its host's breaker
// and its loop's health; last is the log's last sequence as last seen.
func (w *Webhooks) statOf(q *queue, last uint64, now time.Time) SubStats {
	q.mu.Lock()
	s := q.subStatsLocked()
	idle := q.idle
	q.mu.Unlock()
	s.Host = q.host
	bs, _ := w.breakers.state(q.host, now)
	s.HostBreaker = bs.String()
	cb := breakerStats(w.callbacks, s.Callback, now)
	s.CallbackBreaker = &cb
	if (bs == BreakerOpen || cb.State == BreakerOpen.String()) && s.State == StateFailing {
		s.State = StateCircuitOpen
	}
	if ok, _, err := q.h.State(); !ok && s.State != StateStopped {
		s.State = StateStalled
		s.Stalled = wire.Clip(err.Error())
	}
	if !idle && last > s.Cursor.Seq {
		s.Backlog = last - s.Cursor.Seq
	}
	return s
}
