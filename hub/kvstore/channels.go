package kvstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
	"github.com/rshub/rshub/wire"
)

// PutChannel stores ch under its topic.
func (s *Store) PutChannel(ctx context.Context, ch hub.Channel) error {
	k, err := key("topic", ch.Topic)
	if err == nil && s.cfg.Origin != "" {
		err = ErrOriginChannels
	}
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error { return putJSON(ctx, b.channels, k, ch) })
	}
	if err != nil {
		return fmt.Errorf("kvstore: put channel %q: %w", wire.Clip(ch.Topic), err)
	}
	return nil
}

// Channel returns the channel of topic or hub.ErrNotFound.
func (s *Store) Channel(ctx context.Context, topic string) (hub.Channel, error) {
	return get[hub.Channel](ctx, s, func(b *buckets) jetstream.KeyValue { return b.channels }, "topic", topic, "channel")
}

// Channels lists every channel ordered by topic. The listing is decoded
// again only when the channels bucket changed since the last one (its
// stream's last sequence moved): a hub reading it every few seconds with
// 10,000 channels pays one status request. A listing during which the
// bucket changed is taken again (a few times at most): a channel put while
// a watch reads the bucket can be missing from what it reads.
func (s *Store) Channels(ctx context.Context) ([]hub.Channel, error) {
	var out []hub.Channel
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		ver, err := channelsVersion(ctx, b)
		if err != nil {
			return err
		}
		if list, ok := s.channelList.Get(ver); ok && ver != "" {
			out = list
			return nil
		}
		for attempt := 0; ; attempt++ {
			if out, err = listChannels(ctx, b); err != nil {
				return err
			}
			after, err := channelsVersion(ctx, b)
			if err != nil {
				return err
			}
			if after == ver || attempt == maxListAttempts-1 {
				break
			}
			ver = after
		}
		if ver != "" {
			s.channelList.Put(ver, out)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: channels: %w", err)
	}
	return out, nil
}

// maxListAttempts bounds the listings Channels takes while the bucket
// keeps changing; the last is returned as it is.
const maxListAttempts = 3

// listChannels reads every channel of b, ordered by topic.
func listChannels(ctx context.Context, b *buckets) ([]hub.Channel, error) {
	vals, err := entries(ctx, b.channels, ">")
	if err != nil {
		return nil, err
	}
	out := make([]hub.Channel, 0, len(vals))
	for _, v := range vals {
		var ch hub.Channel
		if err := json.Unmarshal(v, &ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b hub.Channel) int { return strings.Compare(a.Topic, b.Topic) })
	return out, nil
}

// ChannelsVersion returns a version that moves with every channel put and
// delete: the generation of the connection's buckets, the channels
// bucket stream's creation and its last sequence, in one status request. "" when the
// server does not tell.
func (s *Store) ChannelsVersion(ctx context.Context) (string, error) {
	var ver string
	err := s.do(ctx, func(ctx context.Context, b *buckets) (err error) {
		ver, err = channelsVersion(ctx, b)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("kvstore: channels version: %w", err)
	}
	return ver, nil
}

// touchKey is the channels bucket key TouchChannels deletes: the delete
// marker moves the bucket's last sequence, while listings (which skip
// deletes) and lookups (by a topic's digest) never see it.
const touchKey = "_touch"

// TouchChannels moves the channels version without changing a channel, so
// that hubs sharing the store look again at what they keep under it. At
// an edge it does nothing: the channels are the origin's, and move only
// with the origin's.
func (s *Store) TouchChannels(ctx context.Context) error {
	if s.cfg.Origin != "" {
		return nil
	}
	err := s.do(ctx, func(ctx context.Context, b *buckets) error { return b.channels.Delete(ctx, touchKey) })
	if err != nil {
		return fmt.Errorf("kvstore: touch channels: %w", err)
	}
	return nil
}

// channelsVersion is ChannelsVersion on b.
func channelsVersion(ctx context.Context, b *buckets) (string, error) {
	st, err := b.channels.Status(ctx)
	if err != nil {
		return "", err
	}
	if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo() != nil {
		// the stream's creation too: a bucket created again (an edge's
		// mirror of its origin's, rebuilt) starts its sequences again
		info := bs.StreamInfo()
		return fmt.Sprint(b.gen, ".", info.Created.UnixNano(), ".", info.State.LastSeq), nil
	}
	return "", nil
}

// DeleteChannel removes the channel of topic and its follower status; its
// state is kept.
func (s *Store) DeleteChannel(ctx context.Context, topic string) error {
	k, err := key("topic", topic)
	if err == nil && s.cfg.Origin != "" {
		err = ErrOriginChannels
	}
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			if err := deleteKey(ctx, b.channels, k); err != nil {
				return err
			}
			return deleteKey(ctx, b.follow, k)
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete channel %q: %w", wire.Clip(topic), err)
	}
	return nil
}

// ChannelState returns the progress of topic or hub.ErrNotFound. What it
// read (or that there is none) is remembered for UpdateChannelState,
// whose compare-and-set then needs no read of its own: a hub loading a
// channel's state and writing it back after a publish makes two requests,
// not three.
func (s *Store) ChannelState(ctx context.Context, topic string) (hub.ChannelState, error) {
	k, err := key("topic", topic)
	var st hub.ChannelState
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			e, err := b.states.Get(ctx, k)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				s.stateMemo.put(b.gen, k, 0, noState)
				return hub.ErrNotFound
			}
			if err != nil {
				return err
			}
			st = hub.ChannelState{}
			if err := json.Unmarshal(e.Value(), &st); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			s.stateMemo.put(b.gen, k, e.Revision(), e.Value())
			return nil
		})
	}
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("kvstore: channel state %q: %w", wire.Clip(topic), err)
	}
	return st, nil
}

// noState is what the state memo holds for a key without a state: the
// zero state, created at revision 0.
var noState = []byte("{}")

// errFn marks an error returned by the caller's update function, passed
// through unwrapped.
type errFn struct{ err error }

func (e errFn) Error() string { return e.err.Error() }

// UpdateChannelState applies fn to the state of topic and stores the result
// if no other writer changed it meanwhile, retrying fn otherwise.
func (s *Store) UpdateChannelState(ctx context.Context, topic string, fn func(*hub.ChannelState) error) (hub.ChannelState, error) {
	k, err := key("topic", topic)
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", wire.Clip(topic), err)
	}
	var result hub.ChannelState
	err = s.do(ctx, func(ctx context.Context, b *buckets) error {
		for attempt := range maxCASAttempts {
			// first on the state this store last wrote, when it has it:
			// the compare-and-set tells whether it is still current
			st, rev, memoed := hub.ChannelState{}, uint64(0), false
			if r, val, ok := s.stateMemo.get(b.gen, k); ok && attempt == 0 && json.Unmarshal(val, &st) == nil {
				rev, memoed = r, true
			} else {
				st = hub.ChannelState{}
				r, err := getJSON(ctx, b.states, k, &st)
				if err != nil && !errors.Is(err, hub.ErrNotFound) {
					return err
				}
				rev = r
			}
			st.Topic = topic
			if err := fn(&st); err != nil {
				if memoed { // it may not hold for the current state: read it
					s.stateMemo.forget(k)
					continue
				}
				return errFn{err}
			}
			st.Topic = topic // the key's original, whatever fn did
			val, err := json.Marshal(st)
			if err != nil {
				return err
			}
			newRev, conflict, err := casBytes(ctx, b, b.states, k, rev, val)
			if err != nil || conflict {
				s.stateMemo.forget(k)
			}
			if err != nil {
				return err
			}
			if !conflict {
				s.stateMemo.put(b.gen, k, newRev, val)
				result = st
				return nil
			}
			if memoed {
				continue // another hub wrote it: read it, no need to wait
			}
			if err := backoff.Wait(ctx, attempt); err != nil {
				return err
			}
		}
		return fmt.Errorf("still contended after %d attempts", maxCASAttempts)
	})
	if fe, ok := errors.AsType[errFn](err); ok {
		return hub.ChannelState{}, fe.err
	}
	if err != nil {
		return hub.ChannelState{}, fmt.Errorf("kvstore: update channel state %q: %w", wire.Clip(topic), err)
	}
	return result, nil
}

// ListedChannel returns the channel of topic from the last channel
// listing (Channels) when it was read at channels version ver, without
// I/O; false when there is no such listing or topic is not in it.
func (s *Store) ListedChannel(ver, topic string) (hub.Channel, bool) {
	return s.channelList.Find(ver, func(ch hub.Channel) int { return strings.Compare(ch.Topic, topic) })
}
