package hub

import (
	"context"
	"slices"
	"time"
)

// What the hub keeps per channel, and what bounds it:
//
//   - states, the working channel states (state.go): at most
//     MaxChannelStates, and none idle for longer than channelIdle; the
//     least recently used are dropped first. A dropped state is loaded
//     again from the store and caught up with the log on next use, exactly
//     as after a restart, so continuity checks, gaps and resets do not
//     change. Only states already written to the store are dropped: while
//     the store fails, changed states stay (they are the only copy of
//     their gaps until written).
//   - dirty, the topics of changed states: a subset of states.
//   - chanCache, channel definitions read from the store: entries older
//     than channelCacheTTL and not read under the store's current channels
//     version are useless and dropped, as are those read channelIdle ago;
//     beyond MaxChannelStates some are dropped (they are read again).
//   - topicOK, verified topics: dropped when their check expires, and
//     beyond MaxChannelStates (the topic is checked again).
//   - fetched, the validators of fetched topics: beyond MaxChannelStates
//     some are dropped (the next fetch is unconditional).
//   - chanLocks holds only the channels with a request in flight.

// DefaultMaxChannelStates is Config.MaxChannelStates when zero: enough for
// every channel of a hub at DefaultMaxOpenChannels to stay in memory.
const DefaultMaxChannelStates = 16384

// channelIdle is how long a channel's working state stays in memory
// without being used.
const channelIdle = 10 * time.Minute

// idleSweepEvery is how often the hub looks for idle channels; the bound
// on their number is kept at every flush.
const idleSweepEvery = 30 * time.Second

// evict drops what exceeds the bounds described above: every flush when
// over MaxChannelStates, and every idleSweepEvery for idle channels.
func (h *Hub) evict(ctx context.Context) {
	now := h.cfg.Now()
	limit := h.cfg.MaxChannelStates
	ver, _ := h.chanVer.held(now)
	h.mu.Lock()
	idle := now.Sub(h.swept) >= idleSweepEvery
	// once over the bound, trimmed down to 7/8 of it, also at the next
	// flushes when a victim was in use (dropState)
	h.trimming = len(h.states) > limit || (h.trimming && len(h.states) > limit*7/8)
	over := h.trimming
	if idle {
		h.swept = now
	}
	if idle || len(h.chanCache) > limit {
		for t, c := range h.chanCache {
			if c.drop(ver, now) {
				delete(h.chanCache, t)
			}
		}
	}
	trimMap(h.chanCache, limit)
	if idle || len(h.topicOK) > limit {
		for t, until := range h.topicOK {
			if !now.Before(until) {
				delete(h.topicOK, t)
			}
		}
	}
	trimMap(h.topicOK, limit)
	trimMap(h.fetched, limit)
	var victims []string
	if idle || over {
		victims = h.stateVictimsLocked(now, limit, over)
	}
	h.mu.Unlock()
	for _, topic := range victims {
		if ctx.Err() != nil {
			return
		}
		h.dropState(topic, now)
	}
}

// trimMap deletes entries of m, whichever come first, down to seven
// eighths of limit once it holds more than limit, so that the scans of m
// made whenever it is over limit (evict) are paid once per limit/8 new
// entries, not once per flush. For caches whose entries are cheap to get
// again.
func trimMap[V any](m map[string]V, limit int) {
	if len(m) <= limit {
		return
	}
	n := len(m) - limit*7/8
	for k := range m {
		if n <= 0 {
			return
		}
		delete(m, k)
		n--
	}
}

// stateVictimsLocked returns the topics of the working states to drop:
// those idle for channelIdle, and when over (more than limit, or not yet
// trimmed since), the least recently used down to seven eighths of limit
// (so that the sort is paid once per many new channels). The caller holds mu.
func (h *Hub) stateVictimsLocked(now time.Time, limit int, over bool) []string {
	type use struct {
		topic string
		at    time.Time
	}
	uses := make([]use, 0, len(h.states))
	for t, m := range h.states {
		uses = append(uses, use{t, m.used})
	}
	slices.SortFunc(uses, func(a, b use) int { return a.at.Compare(b.at) })
	drop := 0
	if over {
		drop = max(len(uses)-limit*7/8, 0)
	}
	for drop < len(uses) && now.Sub(uses[drop].at) >= channelIdle {
		drop++
	}
	out := make([]string, drop)
	for i := range out {
		out[i] = uses[i].topic
	}
	return out
}

// dropState forgets the working state of topic if it is still unused since
// the sweep that chose it (at) and written to the store. It never waits:
// a channel in use is left for the next sweep.
func (h *Hub) dropState(topic string, at time.Time) {
	unlock, ok := h.chanLocks.tryLock(commitKey(topic))
	if !ok {
		return
	}
	defer unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.states[topic]
	if m == nil || m.dirty || m.flushing || m.used.After(at) {
		return
	}
	m.loaded = false // a reader holding m goes to the store
	delete(h.states, topic)
}

// forgetAll drops everything the hub keeps of topic, changed or not (its
// channel was deleted).
func (h *Hub) forgetAll(ctx context.Context, topic string) {
	unlock, err := h.lockChannel(ctx, commitKey(topic))
	if err == nil {
		defer unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.states[topic]; m != nil && err == nil {
		m.loaded = false
		delete(h.states, topic)
		delete(h.dirty, topic)
	}
	delete(h.chanCache, topic)
	delete(h.topicOK, topic)
	delete(h.fetched, topic)
}
