package kvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rshub/rshub/hub"
)

// PutSubscription stores sub under its ID and indexes it by topic.
func (s *Store) PutSubscription(ctx context.Context, sub hub.Subscription) error {
	t, err := enc(sub.Topic)
	if err == nil && sub.ID == "" {
		err = errors.New("empty subscription ID")
	}
	// Index first: a reader skips an index entry without a subscription.
	if err == nil {
		_, err = s.subTopics.Put(ctx, t+"."+sub.ID, nil)
	}
	if err == nil {
		err = putJSON(ctx, s.subs, sub.ID, sub)
	}
	if err != nil {
		return fmt.Errorf("kvstore: put subscription %s: %w", sub.ID, err)
	}
	return nil
}

// Subscription returns the subscription with id or hub.ErrNotFound.
func (s *Store) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	var sub hub.Subscription
	if _, err := getJSON(ctx, s.subs, id, &sub); err != nil {
		return hub.Subscription{}, fmt.Errorf("kvstore: subscription %s: %w", id, err)
	}
	return sub, nil
}

// Subscriptions lists the subscriptions of topic (all when topic is "")
// ordered by ID.
func (s *Store) Subscriptions(ctx context.Context, topic string) ([]hub.Subscription, error) {
	var out []hub.Subscription
	if topic == "" {
		vals, err := entries(ctx, s.subs, ">")
		if err != nil {
			return nil, fmt.Errorf("kvstore: subscriptions: %w", err)
		}
		for _, v := range vals {
			var sub hub.Subscription
			if err := json.Unmarshal(v, &sub); err != nil {
				return nil, fmt.Errorf("kvstore: subscriptions: %w", err)
			}
			out = append(out, sub)
		}
	} else {
		t, err := enc(topic)
		if err != nil {
			return nil, fmt.Errorf("kvstore: subscriptions of %q: %w", topic, err)
		}
		idx, err := keys(ctx, s.subTopics, t+".*")
		if err != nil {
			return nil, fmt.Errorf("kvstore: subscriptions of %q: %w", topic, err)
		}
		for _, k := range idx {
			sub, err := s.Subscription(ctx, k[len(t)+1:])
			if errors.Is(err, hub.ErrNotFound) {
				continue // index written, subscription not yet or deleted
			}
			if err != nil {
				return nil, err
			}
			if sub.Topic == topic {
				out = append(out, sub)
			}
		}
	}
	slices.SortFunc(out, func(a, b hub.Subscription) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeleteSubscription removes the subscription, its cursor and its dead
// letters. Deleting a missing subscription is not an error.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	sub, err := s.Subscription(ctx, id)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return fmt.Errorf("kvstore: delete subscription: %w", err)
	}
	if err := s.deleteSubscription(ctx, id, sub.Topic); err != nil {
		return fmt.Errorf("kvstore: delete subscription %s: %w", id, err)
	}
	return nil
}

func (s *Store) deleteSubscription(ctx context.Context, id, topic string) error {
	if err := deleteKey(ctx, s.subs, id); err != nil {
		return err
	}
	if topic != "" {
		t, _ := enc(topic)
		if err := deleteKey(ctx, s.subTopics, t+"."+id); err != nil {
			return err
		}
	}
	if err := deleteKey(ctx, s.cursors, id); err != nil {
		return err
	}
	dead, err := keys(ctx, s.dead, id+".*")
	if err != nil {
		return err
	}
	for _, k := range dead {
		if err := deleteKey(ctx, s.dead, k); err != nil {
			return err
		}
	}
	return nil
}

// Cursor returns the delivery cursor of subID or hub.ErrNotFound.
func (s *Store) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	var c hub.Cursor
	if _, err := getJSON(ctx, s.cursors, subID, &c); err != nil {
		return hub.Cursor{}, fmt.Errorf("kvstore: cursor %s: %w", subID, err)
	}
	return c, nil
}

// PutCursor stores the delivery cursor of subID.
func (s *Store) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	if err := putJSON(ctx, s.cursors, subID, c); err != nil {
		return fmt.Errorf("kvstore: put cursor %s: %w", subID, err)
	}
	return nil
}
