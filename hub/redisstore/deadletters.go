package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
)

// AddDeadLetter stores d under its subscription.
func (s *Store) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	b, err := json.Marshal(d)
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, s.key("dead", d.SubID), redis.Z{Score: float64(d.Seq), Member: d.ID})
			p.HSet(ctx, s.key("deadv", d.SubID), d.ID, b)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: add dead letter %s/%s: %w", d.SubID, d.ID, err)
	}
	return nil
}

// DeadLetters lists the dead letters of subID ordered by Seq.
func (s *Store) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	ids, err := s.rdb.ZRange(ctx, s.key("dead", subID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %s: %w", subID, err)
	}
	if len(ids) == 0 {
		return []hub.DeadLetter{}, nil
	}
	vals, err := s.rdb.HMGet(ctx, s.key("deadv", subID), ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %s: %w", subID, err)
	}
	out, err := decodeAll[hub.DeadLetter](vals)
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %s: %w", subID, err)
	}
	// The score orders exactly below 2^53; sort the decoded values to be
	// exact everywhere.
	slices.SortStableFunc(out, func(a, b hub.DeadLetter) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// DeleteDeadLetter removes one dead letter or returns hub.ErrNotFound.
func (s *Store) DeleteDeadLetter(ctx context.Context, subID, id string) error {
	var del *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.key("dead", subID), id)
		del = p.HDel(ctx, s.key("deadv", subID), id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: delete dead letter %s/%s: %w", subID, id, err)
	}
	if del.Val() == 0 {
		return fmt.Errorf("redisstore: delete dead letter %s/%s: %w", subID, id, hub.ErrNotFound)
	}
	return nil
}
