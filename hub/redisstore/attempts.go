package redisstore

import (
	"context"
	"errors"
	"fmt"

	json "github.com/segmentio/encoding/json"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// AddAttempts appends each attempt to its subscription's log, all in one
// transaction: a push, a trim to hub.AttemptLogLen and a new expiry per
// subscription. An attempt that cannot be stored (a bad subscription ID)
// is refused alone: the others are stored, and the error names it.
func (s *Store) AddAttempts(ctx context.Context, as []hub.Attempt) error {
	bySub := map[string][]any{}
	var order []string
	var errs []error
	for _, a := range as {
		if err := check("subscription ID", a.SubID); err != nil {
			errs = append(errs, fmt.Errorf("redisstore: add attempts: %w", err))
			continue
		}
		b, err := json.Marshal(hub.ClipAttempt(a))
		if err != nil {
			errs = append(errs, fmt.Errorf("redisstore: add attempts of %q: %w", wire.Clip(a.SubID), err))
			continue
		}
		if _, seen := bySub[a.SubID]; !seen {
			order = append(order, a.SubID)
		}
		bySub[a.SubID] = append(bySub[a.SubID], b)
	}
	if len(order) == 0 {
		return errors.Join(errs...)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range order {
			k := s.key("attempts", digest(id))
			p.LPush(ctx, k, bySub[id]...) // each to the head: newest first
			p.LTrim(ctx, k, 0, hub.AttemptLogLen-1)
			p.PExpire(ctx, k, hub.AttemptLogTTL)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("redisstore: add attempts of %d subscriptions: %w", len(order), err))
	}
	return errors.Join(errs...)
}

// Attempts returns the attempt log of subID, newest first.
func (s *Store) Attempts(ctx context.Context, subID string) ([]hub.Attempt, error) {
	k, err := s.dkey("attempts", "subscription ID", subID)
	var vals []string
	if err == nil {
		vals, err = s.rdb.LRange(ctx, k, 0, hub.AttemptLogLen-1).Result()
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: attempts of %q: %w", wire.Clip(subID), err)
	}
	out := make([]hub.Attempt, len(vals))
	for i, v := range vals {
		if err := json.Unmarshal([]byte(v), &out[i]); err != nil {
			return nil, fmt.Errorf("redisstore: attempts of %q: %w", wire.Clip(subID), err)
		}
	}
	return out, nil
}
