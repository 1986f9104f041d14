package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// PutFollowStatus stores the follower status of topic.
func (s *Store) PutFollowStatus(ctx context.Context, topic string, status []byte) error {
	err := check("topic", topic)
	if err == nil {
		err = hub.CheckFollowStatus(status)
	}
	if err == nil {
		err = s.rdb.HSet(ctx, s.key("follow"), topic, status).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstore: put follow status %q: %w", wire.Clip(topic), err)
	}
	return nil
}

// FollowStatus returns the follower status of topic or hub.ErrNotFound.
func (s *Store) FollowStatus(ctx context.Context, topic string) ([]byte, error) {
	var b []byte
	err := check("topic", topic)
	if err == nil {
		b, err = s.rdb.HGet(ctx, s.key("follow"), topic).Bytes()
		if errors.Is(err, redis.Nil) {
			err = hub.ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: follow status %q: %w", wire.Clip(topic), err)
	}
	return b, nil
}

// FollowStatuses returns every follower status by topic.
func (s *Store) FollowStatuses(ctx context.Context) (map[string][]byte, error) {
	all, err := s.rdb.HGetAll(ctx, s.key("follow")).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: follow statuses: %w", err)
	}
	out := make(map[string][]byte, len(all))
	for topic, v := range all {
		out[topic] = []byte(v)
	}
	return out, nil
}

// DeleteFollowStatus removes the follower status of topic.
func (s *Store) DeleteFollowStatus(ctx context.Context, topic string) error {
	err := check("topic", topic)
	if err == nil {
		err = s.rdb.HDel(ctx, s.key("follow"), topic).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete follow status %q: %w", wire.Clip(topic), err)
	}
	return nil
}
