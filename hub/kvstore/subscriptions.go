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
	"github.com/rshub/rshub/wire"
)

// cursorValue is the value of a cursors key: the cursor and, as data, the
// subscription it belongs to.
type cursorValue struct {
	hub.Cursor
	SubID string `json:"subId"`
}

// PutSubscription stores sub under its ID and indexes it by topic and by
// shard.
func (s *Store) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	id, err := key("subscription ID", sub.ID)
	var t string
	if err == nil {
		t, err = key("topic", sub.Topic)
	}
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			// Index first: a reader skips an index entry without a
			// subscription. The shard's version moves last, so that a
			// reader that saw the new version lists the new subscription.
			if err := ensureKey(ctx, b.subTopics, t+"."+id, []byte(sub.ID)); err != nil {
				return err
			}
			n := hub.ShardOf(sub.ID)
			if err := ensureKey(ctx, b.subShards, shardPrefix(n)+id, []byte(sub.ID)); err != nil {
				return err
			}
			if err := putJSON(ctx, b.subs, id, sub); err != nil {
				return err
			}
			return bumpShard(ctx, b, n)
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: put subscription %q: %w", wire.Clip(sub.ID), err)
	}
	return nil
}

// Subscription returns the subscription with id or hub.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	return get[hub.Subscription](ctx, s, func(b *buckets) jetstream.KeyValue { return b.subs }, "subscription ID", id, "subscription")
}

// Subscriptions lists the subscriptions of topic (all when topic is "")
// ordered by ID.
func (s *Store) Subscriptions(ctx context.Context, topic string) ([]hub.Subscription, error) {
	out := []hub.Subscription{}
	var err error
	if topic == "" {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			vals, err := entries(ctx, b.subs, ">")
			if err != nil {
				return err
			}
			for _, v := range vals {
				var sub hub.Subscription
				if err := json.Unmarshal(v, &sub); err != nil {
					return err
				}
				out = append(out, sub)
			}
			return nil
		})
	} else {
		var t string
		if t, err = key("topic", topic); err == nil {
			err = s.do(ctx, func(ctx context.Context, b *buckets) (err error) {
				out, err = indexed(ctx, b, b.subTopics, t+".*", func(sub hub.Subscription) bool { return sub.Topic == topic })
				return err
			})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kvstore: subscriptions of %q: %w", wire.Clip(topic), err)
	}
	slices.SortFunc(out, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteSubscription removes the subscription, its cursor, its dead
// letters and its attempt log. Deleting a missing subscription is not an error.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	k, err := key("subscription ID", id)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			var sub hub.Subscription
			if _, err := getJSON(ctx, b.subs, k, &sub); err != nil && !errors.Is(err, hub.ErrNotFound) {
				return err
			}
			if err := deleteSubscription(ctx, b, k, sub.Topic); err != nil {
				return err
			}
			return unindexShard(ctx, b, id, k)
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete subscription %q: %w", wire.Clip(id), err)
	}
	return nil
}

// deleteSubscription removes the keys of the subscription whose ID has
// key token id.
func deleteSubscription(ctx context.Context, b *buckets, id, topic string) error {
	if err := deleteKey(ctx, b.subs, id); err != nil {
		return err
	}
	if topic != "" {
		if err := deleteKey(ctx, b.subTopics, digest(topic)+"."+id); err != nil {
			return err
		}
	}
	if err := deleteKey(ctx, b.cursors, id); err != nil {
		return err
	}
	if err := deleteKey(ctx, b.attempts, id); err != nil {
		return err
	}
	dead, err := keys(ctx, b.dead, id+".*")
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := deleteKey(ctx, b.dead, k); err != nil {
			return err
		}
	}
	return nil
}

// Cursor returns the delivery cursor of subID or hub.ErrNotFound.
func (s *Store) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	c, err := get[cursorValue](ctx, s, func(b *buckets) jetstream.KeyValue { return b.cursors }, "subscription ID", subID, "cursor")
	return c.Cursor, err
}

// PutCursor stores the delivery cursor of subID.
func (s *Store) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	k, err := key("subscription ID", subID)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			return putJSON(ctx, b.cursors, k, cursorValue{Cursor: c, SubID: subID})
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: put cursor %q: %w", wire.Clip(subID), err)
	}
	return nil
}

// indexed loads the subscriptions whose IDs an index bucket holds under the
// keys matching filter, keeping those keep accepts (an index entry can
// outlive or precede its subscription, or name one moved meanwhile).
func indexed(ctx context.Context, b *buckets, index jetstream.KeyValue, filter string, keep func(hub.Subscription) bool) ([]hub.Subscription, error) {
	ids, err := entries(ctx, index, filter)
	if err != nil {
		return nil, err
	}
	out := []hub.Subscription{}
	for _, id := range ids {
		var sub hub.Subscription
		_, err := getJSON(ctx, b.subs, digest(string(id)), &sub)
		if errors.Is(err, hub.ErrNotFound) {
			continue // indexed, not yet stored or deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		if keep(sub) {
			out = append(out, sub)
		}
	}
	return out, nil
}
