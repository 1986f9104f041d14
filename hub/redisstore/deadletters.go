package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	json "github.com/segmentio/encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// deadKeys checks subID and returns the names of its dead letters' zset
// and hash.
func (s *Store) deadKeys(subID string) (seq, val string, err error) {
	if err := check("subscription ID", subID); err != nil {
		return "", "", err
	}
	d := digest(subID)
	return s.key("deadseq", d), s.key("deadval", d), nil
}

// AddDeadLetter stores d under its subscription.
func (s *Store) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	b, err := json.Marshal(d)
	var seqKey, valKey string
	if err == nil {
		seqKey, valKey, err = s.deadKeys(d.SubID)
	}
	if err == nil {
		err = check("dead letter ID", d.ID)
	}
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, seqKey, redis.Z{Score: float64(d.Seq), Member: d.ID})
			p.HSet(ctx, valKey, d.ID, b)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("redisstore: add dead letter %q/%q: %w", wire.Clip(d.SubID), wire.Clip(d.ID), err)
	}
	return nil
}

// DeadLetters lists the dead letters of subID ordered by Seq.
func (s *Store) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	seqKey, valKey, err := s.deadKeys(subID)
	var ids []string
	if err == nil {
		ids, err = s.rdb.ZRange(ctx, seqKey, 0, -1).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %q: %w", wire.Clip(subID), err)
	}
	if len(ids) == 0 {
		return []hub.DeadLetter{}, nil
	}
	vals, err := s.rdb.HMGet(ctx, valKey, ids...).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %q: %w", wire.Clip(subID), err)
	}
	out, err := decodeAll[hub.DeadLetter](vals)
	if err != nil {
		return nil, fmt.Errorf("redisstore: dead letters %q: %w", wire.Clip(subID), err)
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
	seqKey, valKey, err := s.deadKeys(subID)
	if err == nil {
		err = check("dead letter ID", id)
	}
	var del *redis.IntCmd
	if err == nil {
		_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, seqKey, id)
			del = p.HDel(ctx, valKey, id)
			return nil
		})
	}
	if err == nil && del.Val() == 0 {
		err = hub.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("redisstore: delete dead letter %q/%q: %w", wire.Clip(subID), wire.Clip(id), err)
	}
	return nil
}
