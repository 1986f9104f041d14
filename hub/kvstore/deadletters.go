package kvstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

func deadKey(subID, id string) (string, error) {
	k, err := enc(id)
	if err != nil {
		return "", err
	}
	return subID + "." + k, nil
}

// AddDeadLetter stores d under its subscription.
func (s *Store) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	k, err := deadKey(d.SubID, d.ID)
	if err == nil {
		err = putJSON(ctx, s.dead, k, d)
	}
	if err != nil {
		return fmt.Errorf("kvstore: add dead letter %s/%s: %w", d.SubID, d.ID, err)
	}
	return nil
}

// DeadLetters lists the dead letters of subID ordered by Seq.
func (s *Store) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	vals, err := entries(ctx, s.dead, subID+".*")
	if err != nil {
		return nil, fmt.Errorf("kvstore: dead letters %s: %w", subID, err)
	}
	out := make([]hub.DeadLetter, 0, len(vals))
	for _, v := range vals {
		var d hub.DeadLetter
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("kvstore: dead letters %s: %w", subID, err)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b hub.DeadLetter) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// DeleteDeadLetter removes one dead letter or returns hub.ErrNotFound.
func (s *Store) DeleteDeadLetter(ctx context.Context, subID, id string) error {
	k, err := deadKey(subID, id)
	if err != nil {
		return fmt.Errorf("kvstore: delete dead letter %s/%s: %w", subID, id, err)
	}
	e, err := s.dead.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kvstore: delete dead letter %s/%s: %w", subID, id, hub.ErrNotFound)
	}
	if err == nil {
		err = s.dead.Delete(ctx, k, jetstream.LastRevision(e.Revision()))
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		// Deleted (or re-added) by another writer in between.
		return fmt.Errorf("kvstore: delete dead letter %s/%s: %w", subID, id, hub.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete dead letter %s/%s: %w", subID, id, err)
	}
	return nil
}
