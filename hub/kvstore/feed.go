package kvstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

// The feed of subscription writes (hub.SubscriptionFeed). The subs bucket's
// stream holds the last write to each subscription key (a value, or a
// deletion marker that names only the key token); the subshards stream the
// last write to each index key "n.token", whose deletion follows the
// subscription's and names its shard. A mark is the last sequence of each
// stream, "subs.subshards": reading both streams after it gives every key
// written since, once, as it is now. A put comes from the subs stream; a
// deletion from the index stream, checked against the subs bucket, as the
// key may have been written again since. The feed relies on deletion
// markers staying in both streams: a purge of them (a bucket setting or a
// compaction) would hide the deletions made before it from a reader whose
// mark is older.

// feedMark is a position in the subs and subshards streams.
type feedMark struct{ subs, index uint64 }

func (m feedMark) String() string {
	return strconv.FormatUint(m.subs, 10) + "." + strconv.FormatUint(m.index, 10)
}

// parseMark reads a mark String made.
func parseMark(s string) (feedMark, error) {
	a, b, ok := strings.Cut(s, ".")
	subs, err1 := strconv.ParseUint(a, 10, 64)
	index, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return feedMark{}, fmt.Errorf("mark %.40q: %w", s, hub.ErrFeedLost)
	}
	return feedMark{subs: subs, index: index}, nil
}

// SubscriptionKey returns the key token of the subscription id: the Key of
// its deletion's hub.SubscriptionChange.
func (s *Store) SubscriptionKey(id string) string { return digest(id) }

// SubscriptionMark returns the mark of the subscription writes so far.
func (s *Store) SubscriptionMark(ctx context.Context) (string, error) {
	var m feedMark
	err := s.do(ctx, func(ctx context.Context, b *buckets) (err error) {
		m, err = lastMark(ctx, b)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("kvstore: subscription mark: %w", err)
	}
	return m.String(), nil
}

// lastMark reads the last sequence of both streams.
func lastMark(ctx context.Context, b *buckets) (feedMark, error) {
	if b.subsStream.stream == nil || b.subShardsStream.stream == nil {
		return feedMark{}, fmt.Errorf("bucket streams unknown: %w", hub.ErrFeedLost)
	}
	var m feedMark
	for _, k := range []struct {
		bs  bucketStream
		seq *uint64
	}{{b.subsStream, &m.subs}, {b.subShardsStream, &m.index}} {
		info, err := k.bs.stream.Info(ctx)
		if err != nil {
			return feedMark{}, err
		}
		*k.seq = info.State.LastSeq
	}
	return m, nil
}

// SubscriptionChanges returns the last write to each subscription written
// after mark, and the mark after them: hub.ErrFeedLost when the streams
// have gone back behind mark (a bucket made again) or hold more than max
// writes since.
func (s *Store) SubscriptionChanges(ctx context.Context, mark string, max int) ([]hub.SubscriptionChange, string, error) {
	from, err := parseMark(mark)
	if err != nil {
		return nil, "", fmt.Errorf("kvstore: subscription changes: %w", err)
	}
	var out []hub.SubscriptionChange
	next := from
	err = s.do(ctx, func(ctx context.Context, b *buckets) error {
		out, next = nil, from
		to, err := lastMark(ctx, b)
		switch {
		case err != nil:
			return err
		case to.subs < from.subs || to.index < from.index:
			return fmt.Errorf("streams behind mark %s: %w", from, hub.ErrFeedLost)
		case (to.subs-from.subs)+(to.index-from.index) > uint64(max):
			return fmt.Errorf("%d writes since mark %s: %w", (to.subs-from.subs)+(to.index-from.index), from, hub.ErrFeedLost)
		}
		puts := map[string]int{} // key token → index in out
		err = followStream(ctx, b.subsStream, from.subs, to.subs, func(k string, val []byte, deleted bool) error {
			if deleted { // the index's deletion that follows names the shard
				return nil
			}
			var sub hub.Subscription
			if err := json.Unmarshal(val, &sub); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			puts[k] = len(out)
			out = append(out, hub.SubscriptionChange{Shard: hub.ShardOf(sub.ID), Sub: sub, Key: k})
			return nil
		}, &next.subs)
		if err != nil {
			return err
		}
		return followStream(ctx, b.subShardsStream, from.index, to.index, func(ik string, _ []byte, deleted bool) error {
			pre, k, ok := strings.Cut(ik, ".")
			n, err := strconv.Atoi(pre)
			if !deleted || !ok || err != nil || !hub.ValidShard(n) {
				return nil // an index entry made: its subscription's put tells it
			}
			c := hub.SubscriptionChange{Shard: n, Deleted: true, Key: k}
			var sub hub.Subscription
			_, err = getJSON(ctx, b.subs, k, &sub)
			switch {
			case err == nil: // written again since
				c = hub.SubscriptionChange{Shard: hub.ShardOf(sub.ID), Sub: sub, Key: k}
			case !errors.Is(err, hub.ErrNotFound):
				return err
			}
			if i, ok := puts[k]; ok {
				out[i] = c
				return nil
			}
			puts[k] = len(out)
			out = append(out, c)
			return nil
		}, &next.index)
	})
	if err != nil {
		return nil, "", fmt.Errorf("kvstore: subscription changes: %w", err)
	}
	return out, next.String(), nil
}

// followStream calls fn with each message of bs's stream after sequence
// from, up to to at least, and sets *last to the last sequence read (to
// when higher).
func followStream(ctx context.Context, bs bucketStream, from, to uint64, fn func(key string, val []byte, deleted bool) error, last *uint64) error {
	*last = max(*last, to)
	if to <= from {
		return nil
	}
	cc := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{bs.prefix + ">"},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from + 1,
	}
	return pull(ctx, bs, cc, func(key string, val []byte, deleted bool, seq uint64) (bool, error) {
		*last = max(*last, seq)
		return seq < to, fn(key, val, deleted)
	})
}

var _ hub.SubscriptionFeed = (*Store)(nil)
