package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
	"github.com/rshub/rshub/wire"
)

// PutChannel stores ch under its topic.
func (s *Store) PutChannel(ctx context.Context, ch hub.Channel) error {
	b, err := json.Marshal(ch)
	if err == nil {
		err = check("topic", ch.Topic)
	}
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.key("channels"), ch.Topic, b)
			p.Incr(ctx, s.key("chanver"))
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: put channel %q: %w", wire.Clip(ch.Topic), err)
	}
	return nil
}

// Channel returns the channel of topic or hub.ErrNotFound.
func (s *Store) Channel(ctx context.Context, topic string) (hub.Channel, error) {
	return hget[hub.Channel](ctx, s, "channels", "topic", topic, "channel")
}

// Channels lists every channel ordered by topic. The listing is decoded
// again only when the channel version moved since the last one (every
// PutChannel and DeleteChannel increments it): a hub reading it every few
// seconds with 10,000 channels pays one GET.
func (s *Store) Channels(ctx context.Context) ([]hub.Channel, error) {
	ver, err := s.ChannelsVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("redisstore: channels: %w", err)
	}
	if list, ok := s.channelList.Get(ver); ok {
		return list, nil
	}
	vals, err := s.rdb.HVals(ctx, s.key("channels")).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: channels: %w", err)
	}
	out, err := decodeAll[hub.Channel](vals)
	if err != nil {
		return nil, fmt.Errorf("redisstore: channels: %w", err)
	}
	slices.SortFunc(out, func(a, b hub.Channel) int { return strings.Compare(a.Topic, b.Topic) })
	s.channelList.Put(ver, out)
	return out, nil
}

// ChannelsVersion returns the channel version, a counter every PutChannel
// and DeleteChannel increments, in one GET.
func (s *Store) ChannelsVersion(ctx context.Context) (string, error) {
	ver, err := s.rdb.Get(ctx, s.key("chanver")).Result()
	if errors.Is(err, redis.Nil) {
		return "0", nil
	}
	if err != nil {
		return "", fmt.Errorf("redisstore: channels version: %w", err)
	}
	return ver, nil
}

// TouchChannels moves the channel version without changing a channel, so
// that hubs sharing the store look again at what they keep under it.
func (s *Store) TouchChannels(ctx context.Context) error {
	if err := s.rdb.Incr(ctx, s.key("chanver")).Err(); err != nil {
		return fmt.Errorf("redisstore: touch channels: %w", err)
	}
	return nil
}

// DeleteChannel removes the channel of topic and its follower status; its state is kept.
func (s *Store) DeleteChannel(ctx context.Context, topic string) error {
	err := check("topic", topic)
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, s.key("channels"), topic)
			p.HDel(ctx, s.key("follow"), topic)
			p.Incr(ctx, s.key("chanver"))
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete channel %q: %w", wire.Clip(topic), err)
	}
	return nil
}

// ChannelState returns the progress of topic or hub.ErrNotFound.
func (s *Store) ChannelState(ctx context.Context, topic string) (hub.ChannelState, error) {
	var st hub.ChannelState
	key, err := s.dkey("state", "topic", topic)
	var b []byte
	if err == nil {
		b, err = s.rdb.Get(ctx, key).Bytes()
	}
	if errors.Is(err, redis.Nil) {
		err = hub.ErrNotFound
	}
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("redisstore: channel state %q: %w", wire.Clip(topic), err)
	}
	return st, nil
}

// UpdateChannelState applies fn to the state of topic and stores the result
// unless another writer changed it meanwhile (WATCH), retrying fn then.
func (s *Store) UpdateChannelState(ctx context.Context, topic string, fn func(*hub.ChannelState) error) (hub.ChannelState, error) {
	key, err := s.dkey("state", "topic", topic)
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("redisstore: update channel state %q: %w", wire.Clip(topic), err)
	}
	var result hub.ChannelState
	var fnErr error
	txf := func(tx *redis.Tx) error {
		st := hub.ChannelState{}
		b, err := tx.Get(ctx, key).Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(b, &st); err != nil {
				return err
			}
		}
		st.Topic = topic
		if fnErr = fn(&st); fnErr != nil {
			return fnErr
		}
		st.Topic = topic // the key's original, whatever fn did
		nb, err := json.Marshal(st)
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, nb, 0)
			return nil
		})
		result = st
		return err
	}
	for attempt := range maxTxAttempts {
		err := s.rdb.Watch(ctx, txf, key)
		switch {
		case err == nil:
			return result, nil
		case fnErr != nil:
			return hub.ChannelState{}, fnErr
		case !errors.Is(err, redis.TxFailedErr):
			return hub.ChannelState{}, fmt.Errorf("redisstore: update channel state %q: %w", wire.Clip(topic), err)
		}
		if err := backoff.Wait(ctx, attempt); err != nil {
			return hub.ChannelState{}, fmt.Errorf("redisstore: update channel state %q: %w", wire.Clip(topic), err)
		}
	}
	return hub.ChannelState{}, fmt.Errorf("redisstore: update channel state %q: still contended after %d attempts", wire.Clip(topic), maxTxAttempts)
}

// ListedChannel returns the channel of topic from the last channel
// listing (Channels) when it was read at channels version ver, without
// I/O; false when there is no such listing or topic is not in it.
func (s *Store) ListedChannel(ver, topic string) (hub.Channel, bool) {
	return s.channelList.Find(ver, func(ch hub.Channel) int { return strings.Compare(ch.Topic, topic) })
}
