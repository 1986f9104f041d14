package delivery

import "sync"

// statsIndex keeps what health checks and the admin API ask about every
// queue without walking them all: the queues in trouble (failing, held back
// by an open circuit, stalled, or holding dead letters) and the number of
// queues in each state. Queues report to it as their stats change; a hub
// with 100,000 quiet subscriptions answers from a handful of entries.
type statsIndex struct {
	mu       sync.Mutex
	troubled map[string]*queue
	states   map[string]int // by SubStats.State as the queue set it
	dead     int            // dead letters of the running queues
}

func newStatsIndex() *statsIndex {
	return &statsIndex{troubled: map[string]*queue{}, states: map[string]int{}}
}

// inTrouble reports whether a queue with stats s belongs in the troubled set.
func inTrouble(s queueStats, stalled bool) bool {
	return stalled || s.State == StateFailing || s.State == StateCircuitOpen || s.DeadLetters > 0
}

// changed records that q's stats went from before to after; q.mu is held.
func (x *statsIndex) changed(q *queue, before, after queueStats) {
	if q.gone {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if before.State != after.State {
		x.states[before.State]--
		x.states[after.State]++
	}
	x.dead += after.DeadLetters - before.DeadLetters
	if inTrouble(after, q.stalled) {
		x.troubled[q.id] = q
	} else if x.troubled[q.id] == q {
		delete(x.troubled, q.id)
	}
}

// add counts a new queue; q.mu is held or q is not shared yet.
func (x *statsIndex) add(q *queue) {
	x.mu.Lock()
	x.states[q.stats.State]++
	x.mu.Unlock()
}

// remove forgets q as its goroutine ends.
func (x *statsIndex) remove(q *queue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.gone {
		return
	}
	q.gone = true
	x.mu.Lock()
	defer x.mu.Unlock()
	x.states[q.stats.State]--
	x.dead -= q.stats.DeadLetters
	if x.troubled[q.id] == q {
		delete(x.troubled, q.id)
	}
}

// list returns the troubled queues.
func (x *statsIndex) list() []*queue {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]*queue, 0, len(x.troubled))
	for _, q := range x.troubled {
		out = append(out, q)
	}
	return out
}

// Failing returns the delivery health of the subscriptions whose queue is
// failing, held back by an open circuit breaker or stalled, or holds dead
// letters, ordered by ID. Its cost follows their number, not the number of
// queues.
func (w *Webhooks) Failing() []SubStats {
	return w.statsOf(w.index.list())
}

// StateCounts returns the number of running queues in each delivery state
// and the dead letters they hold. Stalled queues and those held back by an
// open circuit count under StateStalled and StateCircuitOpen.
func (w *Webhooks) StateCounts() (byState map[string]int, deadLetters int) {
	troubled := w.index.list()
	w.index.mu.Lock()
	byState = make(map[string]int, len(w.index.states))
	for st, n := range w.index.states {
		byState[st] = n
	}
	deadLetters = w.index.dead
	w.index.mu.Unlock()
	last, now := w.lastSeq.Load(), w.cfg.Clock()
	for _, q := range troubled { // move those whose state the breaker or health refines
		q.mu.Lock()
		raw := q.stats.State
		q.mu.Unlock()
		if st := w.statOf(q, last, now).State; st != raw && byState[raw] > 0 {
			byState[raw]--
			byState[st]++
		}
	}
	for st, n := range byState {
		if n <= 0 {
			delete(byState, st)
		}
	}
	return byState, deadLetters
}
