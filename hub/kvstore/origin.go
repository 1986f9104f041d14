package kvstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// An edge hub's channels are its origin's (Config.Origin): the store's
// channels bucket is then a mirror, on the store's own NATS server, of the
// origin's channels bucket, reached over the leaf node link in the
// origin's JetStream domain. Reads answer from the mirror, also while the
// link is down (what was mirrored last). The edge never writes the
// origin's bucket (its leaf link may not: embednats.LeafPermissions):
// PutChannel and DeleteChannel fail with ErrOriginChannels, and
// TouchChannels does nothing (the channels move only with the origin's).
// A channel an edge needs (--open-topics) is created at the origin over
// HTTP, and comes back through the mirror like every change made there.
// The edge's own channels bucket is neither read nor written.

// ErrOriginChannels is the error of a channel write at an edge's store:
// its channels are the origin's, changed at the origin.
var ErrOriginChannels = errors.New("the channels are a mirror of the origin's: change them at the origin")

// ChannelsStream returns the name of the stream of the channels bucket of
// a store with prefix (DefaultPrefix when ""): the stream an edge mirrors.
func ChannelsStream(prefix string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return "KV_" + prefix + "_channels"
}

// originChannelsKind names the mirror bucket: <prefix>_originchannels.
const originChannelsKind = "originchannels"

// OriginChannelsStream returns the name of the stream that mirrors the
// origin's channels bucket in a store with prefix (DefaultPrefix when "").
func OriginChannelsStream(prefix string) string {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return "KV_" + prefix + "_" + originChannelsKind
}

// originChannelsConfig is the mirror stream of the origin's channels
// bucket: a key-value bucket's stream (one value per key, direct gets) whose
// messages come from the origin's, keeping their subjects.
func originChannelsConfig(cfg Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              OriginChannelsStream(cfg.Prefix),
		Description:       "rshub channels, a mirror of the origin's in JetStream domain " + cfg.Origin,
		Storage:           jetstream.FileStorage,
		Replicas:          cfg.Replicas,
		MaxMsgsPerSubject: 1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		Discard:           jetstream.DiscardNew,
		AllowDirect:       true,
		Mirror: &jetstream.StreamSource{
			Name:     ChannelsStream(cfg.Prefix),
			External: &jetstream.ExternalStream{APIPrefix: "$JS." + cfg.Origin + ".API"},
		},
	}
}

// openOriginChannels returns the handle of the mirror of the origin's
// channels bucket, creating the mirror when missing. It needs no answer
// from the origin: the mirror fills once the link is up.
func openOriginChannels(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.KeyValue, error) {
	sc := originChannelsConfig(cfg)
	if _, err := js.Stream(ctx, sc.Name); errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = js.CreateStream(ctx, sc)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return js.KeyValue(ctx, cfg.Prefix+"_"+originChannelsKind)
}

// RebuildOriginChannels deletes the mirror of the origin's channels and
// creates it again, empty, to fill from the origin's bucket as it is now:
// for an origin whose buckets were created again (its data lost), whose
// revisions start again below what the mirror holds and would not be
// mirrored. It fails on a store that is not an edge's.
func (s *Store) RebuildOriginChannels(ctx context.Context) error {
	if s.cfg.Origin == "" {
		return errors.New("kvstore: rebuild origin channels: the store is not an edge's")
	}
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		if err := b.js.DeleteStream(ctx, OriginChannelsStream(s.cfg.Prefix)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		kv, err := openOriginChannels(ctx, b.js, s.cfg)
		if err != nil {
			return err
		}
		nb := *b
		nb.channels = kv
		s.mu.Lock()
		if s.b == b {
			s.b = &nb
		}
		s.mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("kvstore: rebuild origin channels: %w", err)
	}
	return nil
}

// OriginState is what an edge's store knows of its mirror of the origin's
// channels.
type OriginState struct {
	// Heard is true once the origin's server answered the mirror since
	// the edge's server started: the channels are the origin's as of then
	// (or later).
	Heard bool
	// Active is how long ago the origin was last heard from; negative
	// when it was not since the edge's server started.
	Active time.Duration
	// Channels is how many entries the mirror holds (deleted channels'
	// markers included).
	Channels uint64
	// Err is the mirror's last error, "" when none.
	Err string
}

// OriginChannels reports the state of the mirror of the origin's
// channels. It fails on a store that is not an edge's.
func (s *Store) OriginChannels(ctx context.Context) (OriginState, error) {
	if s.cfg.Origin == "" {
		return OriginState{}, errors.New("kvstore: origin channels: the store is not an edge's")
	}
	var st OriginState
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		js, err := b.js.Stream(ctx, OriginChannelsStream(s.cfg.Prefix))
		if err != nil {
			return err
		}
		info := js.CachedInfo()
		st = OriginState{Active: -1, Channels: info.State.Msgs}
		if m := info.Mirror; m != nil {
			st.Active, st.Heard = m.Active, m.Active >= 0
			if m.Error != nil {
				st.Err = m.Error.Error()
			}
		}
		return nil
	})
	if err != nil {
		return OriginState{}, fmt.Errorf("kvstore: origin channels: %w", err)
	}
	return st, nil
}
