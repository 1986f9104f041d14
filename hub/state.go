package hub

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// flushEvery is how often changed channel states are written to the store.
const flushEvery = 100 * time.Millisecond

// memState is the hub's working copy of one channel's state. The log is the
// source of truth: the copy is caught up from the log when first used and
// whenever a conditional append finds another writer got there first; the
// store receives it shortly after each change, for visibility and restarts.
//
// The fields other than used are guarded by the channel lock; used is
// guarded by Hub.mu.
type memState struct {
	topic    string
	st       ChannelState
	loaded   bool
	dirty    bool      // changed since the last flush began
	flushing bool      // a flush of it is writing to the store
	checked  time.Time // when the store's continuity resets were last compared with st's
	// checkedVer is the store's channels version read before that
	// comparison ("" when unknown): while it stays, no reset was made
	// through another hub (ResetContinuity moves it).
	checkedVer string
	used       time.Time // when intake last asked for it, for eviction (evict.go)
}

// markDirty notes that m changed and must be written to the store. The
// caller holds the channel lock.
func (h *Hub) markDirty(m *memState) {
	m.dirty = true
	h.mu.Lock()
	h.dirty[m.topic] = struct{}{}
	h.mu.Unlock()
}

// state returns the working state of ch, loading it from the store and
// catching it up with the log on first use. The caller holds the channel lock.
func (h *Hub) state(ctx context.Context, ch Channel) (*memState, error) {
	h.mu.Lock()
	m := h.states[ch.Topic]
	if m == nil {
		m = &memState{topic: ch.Topic}
		h.states[ch.Topic] = m
	}
	m.used = h.cfg.Now()
	h.mu.Unlock()
	if m.loaded {
		return m, nil
	}
	now := h.cfg.Now()
	ver, _ := h.chanVer.current(ctx, h.cfg.Store, now) // before the state: see freshState
	st, err := h.cfg.Store.ChannelState(ctx, ch.Topic)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, unavailable("the state store", fmt.Errorf("channel state: %w", err))
	}
	st.Topic = ch.Topic
	m.st = st
	m.checked, m.checkedVer = now, ver
	if err := h.catchUp(ctx, ch, m); err != nil {
		return nil, unavailable("the log", err)
	}
	m.loaded = true
	return m, nil
}

// catchUp applies every record of the channel after m's last sequence.
func (h *Hub) catchUp(ctx context.Context, ch Channel, m *memState) error {
	err := Walk(ctx, h.cfg.Log, ch.Name, m.st.LastSeq+1, math.MaxUint64, func(rec wire.Record) error {
		var gap *Gap
		if !rec.Until.IsZero() {
			if c := changefeed.CheckContinuity(m.st.LastUntil, rec.From, rec.Until); c.Verdict == changefeed.Gap {
				gap = &Gap{From: c.Missing.From, Until: c.Missing.Until, Seq: rec.Seq, Recorded: h.cfg.Now().UTC()}
			}
		}
		advance(&m.st, rec, gap)
		h.markDirty(m)
		return nil
	})
	if err != nil {
		return fmt.Errorf("catch channel state up with the log: %w", err)
	}
	return nil
}

// advance applies one stored record to a channel state.
func advance(st *ChannelState, rec wire.Record, gap *Gap) {
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
	if st, ok, err := h.frameworkState(ctx, topic); ok {
		return st, err
	}
	h.mu.Lock()
	m := h.states[topic]
	h.mu.Unlock()
	if m != nil {
		unlock, err := h.lockChannel(ctx, commitKey(topic))
		if err != nil {
			return ChannelState{}, err
		}
		defer unlock()
		if m.loaded {
			return cloneState(m.st), nil
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

// FlushStates writes every changed channel state to the store now, then
// drops the working states beyond the hub's bounds (evict.go).
func (h *Hub) FlushStates(ctx context.Context) {
	h.mu.Lock()
	topics := make([]string, 0, len(h.dirty))
	for t := range h.dirty {
		topics = append(topics, t)
	}
	clear(h.dirty)
	h.mu.Unlock()
	for _, topic := range topics {
		h.flushState(ctx, topic)
	}
	h.evict(ctx)
}

// flushState writes the working state of topic to the store if it
// changed since its last flush.
func (h *Hub) flushState(ctx context.Context, topic string) {
	unlock, err := h.lockChannel(ctx, commitKey(topic))
	if err != nil {
		h.mu.Lock()
		h.dirty[topic] = struct{}{} // busy or shutting down: the next flush writes it
		h.mu.Unlock()
		return
	}
	h.mu.Lock()
	m := h.states[topic]
	h.mu.Unlock()
	if m == nil || !m.dirty {
		unlock()
		return
	}
	snap := cloneState(m.st)
	m.dirty, m.flushing = false, true
	unlock()
	stale := false
	_, err = h.cfg.Store.UpdateChannelState(ctx, topic, func(s *ChannelState) error {
		// a reset this hub has not applied yet wins: the working
		// copy is reloaded from the store and the log at next use
		stale = resetGen(s) > resetGen(&snap)
		if !stale && snap.LastSeq >= s.LastSeq {
			*s = snap
		}
		return nil
	})
	if err != nil {
		h.logger.Error("store channel state", "topic", wire.Clip(topic), "err", wire.Clip(err.Error()))
	}
	// the channel lock is taken without ctx: flushing must end even when
	// ctx has, or the state could never be evicted
	unlock, lerr := h.lockChannel(context.WithoutCancel(ctx), commitKey(topic))
	if lerr != nil {
		return
	}
	defer unlock()
	m.flushing = false
	switch {
	case err != nil:
		h.markDirty(m)
	case stale:
		if resetGen(&m.st) <= resetGen(&snap) {
			m.loaded = false
		}
	}
}

// maxResets bounds the continuity resets kept per channel; older ones are
// dropped (the generation keeps counting).
const maxResets = 20

// ContinuityReset records an operator's reset of a channel's continuity
// anchor, the until the next notification is checked against. A reset
// applies at a position of the log: the anchor becomes Until, and the
// records after Seq move it on as usual. Every hub sharing the store picks
// it up (the one with the highest Gen wins).
type ContinuityReset struct {
	Gen       uint64    `json:"gen"`                // 1 for a channel's first reset, then counting up
	At        time.Time `json:"at"`                 // when, by the clock of the hub that made it
	Seq       uint64    `json:"seq"`                // the channel's last log sequence at the reset
	PrevUntil time.Time `json:"prevUntil,omitzero"` // the anchor before
	Until     time.Time `json:"until,omitzero"`     // the anchor after; zero: none, the next notification is taken as the first
	By        string    `json:"by,omitempty"`
}

// resetGen is the generation of the latest reset in st, 0 when none.
func resetGen(st *ChannelState) uint64 {
	if len(st.Resets) == 0 {
		return 0
	}
	return st.Resets[len(st.Resets)-1].Gen
}

// cloneState copies st so that its slices are not shared.
func cloneState(st ChannelState) ChannelState {
	st.Gaps = append([]Gap(nil), st.Gaps...)
	st.Resets = append([]ContinuityReset(nil), st.Resets...)
	return st
}

// freshState returns the working state of ch, first applying any
// continuity reset made through another hub: the store is compared at most
// every channelCacheTTL, and with a store that has a channels version only
// when that version moved since the last comparison, or now when force is
// set. changed reports that a reset was applied. The caller holds the
// channel lock.
func (h *Hub) freshState(ctx context.Context, ch Channel, force bool) (m *memState, changed bool, err error) {
	m, err = h.state(ctx, ch)
	if err != nil {
		return nil, false, err
	}
	now := h.cfg.Now()
	ver, _ := h.chanVer.current(ctx, h.cfg.Store, now) // "" when unknown
	if !force && (now.Sub(m.checked) < channelCacheTTL || (ver != "" && ver == m.checkedVer)) {
		return m, false, nil
	}
	stored, err := h.cfg.Store.ChannelState(ctx, ch.Topic)
	if errors.Is(err, ErrNotFound) {
		m.checked, m.checkedVer = now, ver
		return m, false, nil
	}
	if err != nil {
		return nil, false, unavailable("the state store", fmt.Errorf("channel state: %w", err))
	}
	m.checked, m.checkedVer = now, ver
	if resetGen(&stored) <= resetGen(&m.st) {
		return m, false, nil
	}
	stored.Topic = ch.Topic
	m.st = stored
	if err := h.catchUp(ctx, ch, m); err != nil {
		m.loaded = false
		return nil, false, unavailable("the log", err)
	}
	h.logger.Info("continuity reset made through another hub applied", "channel", ch.Name, "until", fmtTime(m.st.LastUntil), "gen", resetGen(&m.st))
	return m, true, nil
}

// Continuity returns ch's progress with every continuity reset the store
// knows of applied: the anchor the next notification is checked against.
func (h *Hub) Continuity(ctx context.Context, ch Channel) (ChannelState, error) {
	m, unlock, err := h.currentState(ctx, ch)
	if err != nil {
		return ChannelState{}, err
	}
	defer unlock()
	return cloneState(m.st), nil
}

// currentState locks ch and returns its working state with every reset the
// store knows of applied and every record of the log read (the log may
// hold records this hub has not seen). The caller calls unlock.
func (h *Hub) currentState(ctx context.Context, ch Channel) (*memState, func(), error) {
	unlock, err := h.lockChannel(ctx, commitKey(ch.Topic))
	if err != nil {
		return nil, nil, err
	}
	m, _, err := h.freshState(ctx, ch, true)
	if err == nil {
		if err = h.catchUp(ctx, ch, m); err != nil {
			err = unavailable("the log", err)
		}
	}
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return m, unlock, nil
}

// ResetContinuity sets ch's continuity anchor to until, or clears it when
// until is zero (the next notification is accepted as the first), at the
// channel's current log position. The reset is stored with the channel's
// state (UpdateChannelState), so every hub sharing the store follows it, and
// logged; by says who asked.
func (h *Hub) ResetContinuity(ctx context.Context, ch Channel, until time.Time, by string) (ChannelState, error) {
	m, unlock, err := h.currentState(ctx, ch)
	if err != nil {
		return ChannelState{}, err
	}
	defer unlock()
	now := h.cfg.Now().UTC()
	if !until.IsZero() {
		until = until.UTC()
	}
	var r ContinuityReset
	st, err := h.cfg.Store.UpdateChannelState(ctx, ch.Topic, func(s *ChannelState) error {
		next := cloneState(m.st)
		if resetGen(s) > resetGen(&next) { // raced by a reset through another hub
			next.Resets = append([]ContinuityReset(nil), s.Resets...)
		}
		r = ContinuityReset{Gen: resetGen(&next) + 1, At: now, Seq: next.LastSeq, PrevUntil: next.LastUntil, Until: until, By: by}
		next.Resets = append(next.Resets, r)
		if len(next.Resets) > maxResets {
			next.Resets = next.Resets[len(next.Resets)-maxResets:]
		}
		next.LastFrom, next.LastUntil = time.Time{}, until
		*s = next
		return nil
	})
	if err != nil {
		return ChannelState{}, unavailable("the state store", fmt.Errorf("store the continuity reset: %w", err))
	}
	m.st, m.dirty, m.checked = cloneState(st), false, now
	// hubs sharing the store compare their states again
	if err := h.cfg.Store.TouchChannels(ctx); err != nil {
		return ChannelState{}, unavailable("the state store", fmt.Errorf("continuity reset stored but not announced to the other hubs (reset again): %w", err))
	}
	h.logger.Warn("continuity anchor reset", "channel", ch.Name, "topic", wire.Clip(ch.Topic),
		"previous_until", fmtTime(r.PrevUntil), "until", fmtTime(r.Until), "seq", r.Seq, "gen", r.Gen, "by", wire.Clip(by))
	return cloneState(st), nil
}
