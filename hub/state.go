package hub

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// channelCacheTTL is how long a channel definition read from the store is
// reused by intake; changes made through another hub process show within it.
const channelCacheTTL = 2 * time.Second

// flushEvery is how often changed channel states are written to the store.
const flushEvery = 100 * time.Millisecond

// memState is the hub's working copy of one channel's state. The log is the
// source of truth: the copy is caught up from the log when first used and
// whenever a conditional append finds another writer got there first; the
// store receives it shortly after each change, for visibility and restarts.
type memState struct {
	st     ChannelState
	loaded bool
	dirty  bool
}

type cachedChannel struct {
	ch      Channel
	fetched time.Time
}

// lookupChannel returns the channel of topic, from a short-lived cache.
func (h *Hub) lookupChannel(ctx context.Context, topic string) (Channel, error) {
	now := h.cfg.Now()
	h.mu.Lock()
	c, ok := h.chanCache[topic]
	h.mu.Unlock()
	if ok && now.Sub(c.fetched) < channelCacheTTL {
		return c.ch, nil
	}
	ch, err := h.cfg.Store.Channel(ctx, topic)
	if err != nil {
		return ch, err
	}
	h.mu.Lock()
	h.chanCache[topic] = cachedChannel{ch: ch, fetched: now}
	h.mu.Unlock()
	return ch, nil
}

func (h *Hub) forgetChannel(topic string) {
	h.mu.Lock()
	delete(h.chanCache, topic)
	h.mu.Unlock()
}

// state returns the working state of ch, loading it from the store and
// catching it up with the log on first use. The caller holds the channel lock.
func (h *Hub) state(ctx context.Context, ch Channel) (*memState, error) {
	h.mu.Lock()
	m := h.states[ch.Topic]
	if m == nil {
		m = &memState{}
		h.states[ch.Topic] = m
	}
	h.mu.Unlock()
	if m.loaded {
		return m, nil
	}
	st, err := h.cfg.Store.ChannelState(ctx, ch.Topic)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("channel state: %w", err)
	}
	st.Topic = ch.Topic
	m.st = st
	if err := h.catchUp(ctx, ch, m); err != nil {
		return nil, err
	}
	m.loaded = true
	return m, nil
}

// catchUp applies every record of the channel after m's last sequence.
func (h *Hub) catchUp(ctx context.Context, ch Channel, m *memState) error {
	err := Walk(ctx, h.cfg.Log, ch.Name, m.st.LastSeq+1, math.MaxUint64, func(rec Record) error {
		var gap *Gap
		if !rec.Until.IsZero() {
			if c := changefeed.CheckContinuity(m.st.LastUntil, rec.From, rec.Until); c.Verdict == changefeed.Gap {
				gap = &Gap{From: c.Missing.From, Until: c.Missing.Until, Seq: rec.Seq, Recorded: h.cfg.Now().UTC()}
			}
		}
		advance(&m.st, rec, gap)
		m.dirty = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("catch channel state up with the log: %w", err)
	}
	return nil
}

// advance applies one stored record to a channel state.
func advance(st *ChannelState, rec Record, gap *Gap) {
	if rec.Seq <= st.LastSeq {
		return
	}
	st.LastSeq = rec.Seq
	st.LastHash = rec.Key
	st.Published++
	if !rec.Until.IsZero() && rec.Until.After(st.LastUntil) {
		st.LastFrom, st.LastUntil = rec.From, rec.Until
	}
	if gap != nil {
		st.Gaps = append(st.Gaps, *gap)
		if len(st.Gaps) > maxGaps {
			st.Gaps = st.Gaps[len(st.Gaps)-maxGaps:]
		}
	}
}

// ChannelState returns the channel's current progress: the hub's working
// copy when it has one, the stored state otherwise.
func (h *Hub) ChannelState(ctx context.Context, topic string) (ChannelState, error) {
	h.mu.Lock()
	m := h.states[topic]
	h.mu.Unlock()
	if m != nil {
		lock := h.channelLock(topic)
		lock.Lock()
		defer lock.Unlock()
		if m.loaded {
			st := m.st
			st.Gaps = append([]Gap(nil), m.st.Gaps...)
			return st, nil
		}
	}
	return h.cfg.Store.ChannelState(ctx, topic)
}

// flushStates writes changed working states to the store until ctx ends,
// then once more.
func (h *Hub) flushStates(ctx context.Context) {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.FlushStates(context.WithoutCancel(ctx))
			return
		case <-t.C:
			h.FlushStates(ctx)
		}
	}
}

// FlushStates writes every changed channel state to the store now.
func (h *Hub) FlushStates(ctx context.Context) {
	h.mu.Lock()
	topics := make([]string, 0, len(h.states))
	for t := range h.states {
		topics = append(topics, t)
	}
	h.mu.Unlock()
	for _, topic := range topics {
		lock := h.channelLock(topic)
		lock.Lock()
		h.mu.Lock()
		m := h.states[topic]
		h.mu.Unlock()
		if m == nil || !m.dirty {
			lock.Unlock()
			continue
		}
		snap := m.st
		snap.Gaps = append([]Gap(nil), m.st.Gaps...)
		m.dirty = false
		lock.Unlock()
		_, err := h.cfg.Store.UpdateChannelState(ctx, topic, func(s *ChannelState) error {
			if snap.LastSeq >= s.LastSeq {
				*s = snap
			}
			return nil
		})
		if err != nil {
			h.log.Error("store channel state", "topic", topic, "err", err)
			lock.Lock()
			m.dirty = true
			lock.Unlock()
		}
	}
}
