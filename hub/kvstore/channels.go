package kvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
)

// PutChannel stores ch under its topic.
func (s *Store) PutChannel(ctx context.Context, ch hub.Channel) error {
	k, err := enc(ch.Topic)
	if err == nil {
		err = putJSON(ctx, s.channels, k, ch)
	}
	if err != nil {
		return fmt.Errorf("kvstore: put channel %q: %w", ch.Topic, err)
	}
	return nil
}

// Channel returns the channel of topic or hub.ErrNotFound.
func (s *Store) Channel(ctx context.Context, topic string) (hub.Channel, error) {
	var ch hub.Channel
	k, err := enc(topic)
	if err == nil {
		_, err = getJSON(ctx, s.channels, k, &ch)
	}
	if err != nil {
		return hub.Channel{}, fmt.Errorf("kvstore: channel %q: %w", topic, err)
	}
	return ch, nil
}

// Channels lists every channel ordered by topic.
func (s *Store) Channels(ctx context.Context) ([]hub.Channel, error) {
	vals, err := entries(ctx, s.channels, ">")
	if err != nil {
		return nil, fmt.Errorf("kvstore: channels: %w", err)
	}
	out := make([]hub.Channel, 0, len(vals))
	for _, v := range vals {
		var ch hub.Channel
		if err := json.Unmarshal(v, &ch); err != nil {
			return nil, fmt.Errorf("kvstore: channels: %w", err)
		}
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b hub.Channel) int { return strings.Compare(a.Topic, b.Topic) })
	return out, nil
}

// DeleteChannel removes the channel of topic; its state is kept.
func (s *Store) DeleteChannel(ctx context.Context, topic string) error {
	k, err := enc(topic)
	if err == nil {
		err = deleteKey(ctx, s.channels, k)
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete channel %q: %w", topic, err)
	}
	return nil
}

// ChannelState returns the progress of topic or hub.ErrNotFound.
func (s *Store) ChannelState(ctx context.Context, topic string) (hub.ChannelState, error) {
	var st hub.ChannelState
	k, err := enc(topic)
	if err == nil {
		_, err = getJSON(ctx, s.states, k, &st)
	}
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("kvstore: channel state %q: %w", topic, err)
	}
	return st, nil
}

// UpdateChannelState applies fn to the state of topic and stores the result
// if no other writer changed it meanwhile, retrying fn otherwise.
func (s *Store) UpdateChannelState(ctx context.Context, topic string, fn func(*hub.ChannelState) error) (hub.ChannelState, error) {
	k, err := enc(topic)
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", topic, err)
	}
	for attempt := range maxCASAttempts {
		st := hub.ChannelState{}
		rev, err := getJSON(ctx, s.states, k, &st)
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", topic, err)
		}
		st.Topic = topic
		if err := fn(&st); err != nil {
			return hub.ChannelState{}, err
		}
		conflict, err := casJSON(ctx, s.states, k, rev, st)
		if err != nil {
			return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", topic, err)
		}
		if !conflict {
			return st, nil
		}
		if err := backoff.Wait(ctx, attempt); err != nil {
			return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", topic, err)
		}
	}
	return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: still contended after %d attempts", topic, maxCASAttempts)
}
