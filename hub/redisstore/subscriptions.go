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
	"github.com/rshub/rshub/wire"
)

// PutSubscription stores sub and indexes it by topic and by shard.
func (s *Store) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	b, err := json.Marshal(sub)
	if err == nil {
		err = check("subscription ID", sub.ID)
	}
	var byTopic string
	if err == nil {
		byTopic, err = s.dkey("topicsubs", "topic", sub.Topic)
	}
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.key("subs"), sub.ID, b)
			p.SAdd(ctx, byTopic, sub.ID)
			s.indexShard(ctx, p, sub.ID, true)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: put subscription %q: %w", wire.Clip(sub.ID), err)
	}
	return nil
}

// Subscription returns the subscription with id or hub.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	return hget[hub.Subscription](ctx, s, "subs", "subscription ID", id, "subscription")
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
		byTopic, err := s.dkey("topicsubs", "topic", topic)
		var ids []string
		if err == nil {
			ids, err = s.rdb.SMembers(ctx, byTopic).Result()
		}
		if err == nil && len(ids) > 0 {
			vals, err = s.rdb.HMGet(ctx, s.key("subs"), ids...).Result()
		}
		if err != nil {
			return nil, fmt.Errorf("redisstore: subscriptions of %q: %w", wire.Clip(topic), err)
		}
	}
	out, err := decodeAll[hub.Subscription](vals)
	if err != nil {
		return nil, fmt.Errorf("redisstore: subscriptions: %w", err)
	}
	slices.SortFunc(out, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteSubscription removes the subscription, its cursor, its dead
// letters and its attempt log in one transaction. Deleting a missing subscription is not an
// error.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	sub, err := s.Subscription(ctx, id)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return fmt.Errorf("redisstore: delete subscription: %w", err)
	}
	d := digest(id)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, s.key("subs"), id)
		if sub.Topic != "" {
			p.SRem(ctx, s.key("topicsubs", digest(sub.Topic)), id)
		}
		p.HDel(ctx, s.key("cursors"), id)
		p.Del(ctx, s.key("deadseq", d), s.key("deadval", d), s.key("attempts", d))
		s.indexShard(ctx, p, id, false)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: delete subscription %q: %w", wire.Clip(id), err)
	}
	return nil
}

// Cursor returns the delivery cursor of subID or hub.ErrNotFound.
func (s *Store) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	return hget[hub.Cursor](ctx, s, "cursors", "subscription ID", subID, "cursor")
}

// PutCursor stores the delivery cursor of subID.
func (s *Store) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	b, err := json.Marshal(c)
	if err == nil {
		err = check("subscription ID", subID)
	}
	if err == nil {
		err = s.rdb.HSet(ctx, s.key("cursors"), subID, b).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstore: put cursor %q: %w", wire.Clip(subID), err)
	}
	return nil
}

// PutCursors stores the delivery cursors of many subscriptions (by
// subscription ID) in one HSET, one round trip, and returns the error of
// each one not stored; nil when all were.
func (s *Store) PutCursors(ctx context.Context, cursors map[string]hub.Cursor) map[string]error {
	var failed map[string]error
	fail := func(id string, err error) {
		if failed == nil {
			failed = map[string]error{}
		}
		failed[id] = fmt.Errorf("redisstore: put cursor %q: %w", wire.Clip(id), err)
	}
	pairs := make([]any, 0, 2*len(cursors))
	for id, c := range cursors {
		b, err := json.Marshal(c)
		if err == nil {
			err = check("subscription ID", id)
		}
		if err != nil {
			fail(id, err)
			continue
		}
		pairs = append(pairs, id, b)
	}
	if len(pairs) == 0 {
		return failed
	}
	if err := s.rdb.HSet(ctx, s.key("cursors"), pairs...).Err(); err != nil {
		for i := 0; i < len(pairs); i += 2 {
			fail(pairs[i].(string), err)
		}
	}
	return failed
}
