package hub_test

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// memBackend is an in-memory log and channel store, just enough for
// intake: it lets a benchmark weigh the hub's own memory, which the
// in-process NATS server's caches would blur. The Store methods intake
// does not use are left to the nil embedded interface.
type memBackend struct {
	hub.Store

	mu      sync.Mutex
	chans   map[string]hub.Channel
	states  map[string]hub.ChannelState
	byChan  map[string][]wire.Record
	last    uint64
	changed chan struct{}
}

// ChannelsVersion answers that the backend cannot tell a version.
func (m *memBackend) ChannelsVersion(context.Context) (string, error) { return "", nil }

// ListedChannel answers that the backend holds no listing.
func (m *memBackend) ListedChannel(string, string) (hub.Channel, bool) { return hub.Channel{}, false }

func newMemBackend() *memBackend {
	return &memBackend{chans: map[string]hub.Channel{}, states: map[string]hub.ChannelState{}, byChan: map[string][]wire.Record{}, changed: make(chan struct{})}
}

func (m *memBackend) PutChannel(_ context.Context, ch hub.Channel) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chans[ch.Topic] = ch
	return nil
}

func (m *memBackend) Channel(_ context.Context, topic string) (hub.Channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.chans[topic]
	if !ok {
		return ch, hub.ErrNotFound
	}
	return ch, nil
}

func (m *memBackend) Channels(context.Context) ([]hub.Channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]hub.Channel, 0, len(m.chans))
	for _, ch := range m.chans {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b hub.Channel) int { return strings.Compare(a.Topic, b.Topic) })
	return out, nil
}

func (m *memBackend) ChannelState(_ context.Context, topic string) (hub.ChannelState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[topic]
	if !ok {
		return st, hub.ErrNotFound
	}
	return st, nil
}

func (m *memBackend) UpdateChannelState(_ context.Context, topic string, fn func(*hub.ChannelState) error) (hub.ChannelState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[topic]
	if !ok {
		st.Topic = topic
	}
	if err := fn(&st); err != nil {
		return hub.ChannelState{}, err
	}
	m.states[topic] = st
	return st, nil
}

// Append stores rec (no deduplication window).
func (m *memBackend) Append(_ context.Context, rec wire.Record) (uint64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last++
	rec.Seq = m.last
	m.byChan[rec.Channel] = append(m.byChan[rec.Channel], rec)
	close(m.changed)
	m.changed = make(chan struct{})
	return rec.Seq, false, nil
}

func (m *memBackend) Next(_ context.Context, channel string, seq uint64) (wire.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs := m.byChan[channel]
	i, _ := slices.BinarySearchFunc(recs, seq, func(r wire.Record, s uint64) int { return compareSeq(r.Seq, s) })
	if i == len(recs) {
		return wire.Record{}, hub.ErrNotFound
	}
	return recs[i], nil
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *memBackend) Bounds(context.Context) (uint64, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == 0 {
		return 0, 0, nil
	}
	return 1, m.last, nil
}

func (m *memBackend) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}
