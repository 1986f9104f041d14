package kvstore

import (
	"context"
	"fmt"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// followRecord is the value of a follow key: the topic, as data, and the
// follower status.
type followRecord struct {
	Topic  string          `json:"topic"`
	Status json.RawMessage `json:"status"`
}

// PutFollowStatus stores the follower status of topic.
func (s *Store) PutFollowStatus(ctx context.Context, topic string, status []byte) error {
	k, err := key("topic", topic)
	if err == nil {
		err = hub.CheckFollowStatus(status)
	}
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			return putJSON(ctx, b.follow, k, followRecord{Topic: topic, Status: status})
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: put follow status %q: %w", wire.Clip(topic), err)
	}
	return nil
}

// FollowStatus returns the follower status of topic or hub.ErrNotFound.
func (s *Store) FollowStatus(ctx context.Context, topic string) ([]byte, error) {
	rec, err := get[followRecord](ctx, s, func(b *buckets) jetstream.KeyValue { return b.follow }, "topic", topic, "follow status")
	return rec.Status, err
}

// FollowStatuses returns every follower status by topic.
func (s *Store) FollowStatuses(ctx context.Context) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.do(ctx, func(ctx context.Context, b *buckets) error {
		vals, err := entries(ctx, b.follow, ">")
		if err != nil {
			return err
		}
		for _, v := range vals {
			var rec followRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			out[rec.Topic] = rec.Status
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kvstore: follow statuses: %w", err)
	}
	return out, nil
}

// DeleteFollowStatus removes the follower status of topic.
func (s *Store) DeleteFollowStatus(ctx context.Context, topic string) error {
	k, err := key("topic", topic)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error { return deleteKey(ctx, b.follow, k) })
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete follow status %q: %w", wire.Clip(topic), err)
	}
	return nil
}
