package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
)

// PutSubscription stores sub and indexes it by topic.
func (s *Store) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	b, err := json.Marshal(sub)
	if err == nil && sub.ID == "" {
		err = errors.New("empty subscription ID")
	}
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.key("subs"), sub.ID, b)
			p.SAdd(ctx, s.key("subtopic", sub.Topic), sub.ID)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: put subscription %s: %w", sub.ID, err)
	}
	return nil
}

// Subscription returns the subscription with id or hub.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	var sub hub.Subscription
	if err := s.hgetJSON(ctx, s.key("subs"), id, &sub); err != nil {
		return hub.Subscription{}, fmt.Errorf("redisstore: subscription %s: %w", id, err)
	}
	return sub, nil
}

// Subscriptions lists the subscriptions of topic (all when topic is "")
// ordered by ID.
func (s *Store) Subscriptions(ctx context.Context, topic string) ([]hub.Subscription, error) {
	var vals []any
	if topic == "" {
		all, err := s.rdb.HVals(ctx, s.key("subs")).Result()
		if err != nil {
			return nil, fmt.Errorf("redisstore: subscriptions: %w", err)
		}
		for _, v := range all {
			vals = append(vals, v)
		}
	} else {
		ids, err := s.rdb.SMembers(ctx, s.key("subtopic", topic)).Result()
		if err != nil {
			return nil, fmt.Errorf("redisstore: subscriptions of %q: %w", topic, err)
		}
		if len(ids) > 0 {
			if vals, err = s.rdb.HMGet(ctx, s.key("subs"), ids...).Result(); err != nil {
				return nil, fmt.Errorf("redisstore: subscriptions of %q: %w", topic, err)
			}
		}
	}
	out, err := decodeAll[hub.Subscription](vals)
	if err != nil {
		return nil, fmt.Errorf("redisstore: subscriptions: %w", err)
	}
	slices.SortFunc(out, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteSubscription removes the subscription, its cursor and its dead
// letters in one transaction. Deleting a missing subscription is not an
// error.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	sub, err := s.Subscription(ctx, id)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return fmt.Errorf("redisstore: delete subscription: %w", err)
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, s.key("subs"), id)
		if sub.Topic != "" {
			p.SRem(ctx, s.key("subtopic", sub.Topic), id)
		}
		p.HDel(ctx, s.key("cursors"), id)
		p.Del(ctx, s.key("dead", id), s.key("deadv", id))
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: delete subscription %s: %w", id, err)
	}
	return nil
}

// Cursor returns the delivery cursor of subID or hub.ErrNotFound.
func (s *Store) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	var c hub.Cursor
	if err := s.hgetJSON(ctx, s.key("cursors"), subID, &c); err != nil {
		return hub.Cursor{}, fmt.Errorf("redisstore: cursor %s: %w", subID, err)
	}
	return c, nil
}

// PutCursor stores the delivery cursor of subID.
func (s *Store) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	b, err := json.Marshal(c)
	if err == nil {
		err = s.rdb.HSet(ctx, s.key("cursors"), subID, b).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstore: put cursor %s: %w", subID, err)
	}
	return nil
}
