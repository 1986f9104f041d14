package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	json "github.com/segmentio/encoding/json"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// statesChunk is how many subscriptions one pipelined round trip of
// DeliveryStates reads.
const statesChunk = 512

// DeliveryStates reads the stored cursors of ids and which of them may
// hold dead letters, as a delivery engine starting their queues needs,
// in one pipelined round trip per statesChunk subscriptions instead of
// two requests per subscription. An ID without a cursor is absent from
// cursors; mayHaveDead is true for an ID whose dead-letter set exists.
func (s *Store) DeliveryStates(ctx context.Context, ids []string) (cursors map[string]hub.Cursor, mayHaveDead map[string]bool, err error) {
	cursors, mayHaveDead = make(map[string]hub.Cursor, len(ids)), map[string]bool{}
	for start := 0; start < len(ids); start += statesChunk {
		chunk := ids[start:min(start+statesChunk, len(ids))]
		if err := s.deliveryStates(ctx, chunk, cursors, mayHaveDead); err != nil {
			return nil, nil, fmt.Errorf("redisstore: delivery states: %w", err)
		}
	}
	return cursors, mayHaveDead, nil
}

// deliveryStates reads the states of one chunk of IDs into cursors and
// mayHaveDead.
func (s *Store) deliveryStates(ctx context.Context, ids []string, cursors map[string]hub.Cursor, mayHaveDead map[string]bool) error {
	dead := make([]*redis.IntCmd, len(ids))
	var vals *redis.SliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			seqKey, _, err := s.deadKeys(id)
			if err != nil {
				return err
			}
			dead[i] = p.Exists(ctx, seqKey)
		}
		vals = p.HMGet(ctx, s.key("cursors"), ids...)
		return nil
	})
	if err != nil {
		return err
	}
	for i, v := range vals.Val() {
		str, ok := v.(string)
		if !ok {
			continue // no cursor stored
		}
		var c hub.Cursor
		if err := json.Unmarshal([]byte(str), &c); err != nil {
			return fmt.Errorf("cursor of %q: %w", wire.Clip(ids[i]), err)
		}
		cursors[ids[i]] = c
	}
	for i, cmd := range dead {
		if cmd.Val() > 0 {
			mayHaveDead[ids[i]] = true
		}
	}
	return nil
}
