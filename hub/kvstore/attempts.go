package kvstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// attemptLog is the value of a subscription's key in the attempts bucket.
type attemptLog struct {
	SubID    string        `json:"subscription"`
	Attempts []hub.Attempt `json:"attempts"` // newest first
}

// AddAttempts appends each attempt to its subscription's log: one
// compare-and-set of the log's key per subscription of as.
func (s *Store) AddAttempts(ctx context.Context, as []hub.Attempt) error {
	bySub := map[string][]hub.Attempt{}
	var order []string
	for _, a := range as {
		if _, seen := bySub[a.SubID]; !seen {
			order = append(order, a.SubID)
		}
		bySub[a.SubID] = append(bySub[a.SubID], hub.ClipAttempt(a))
	}
	var errs []error
	for _, id := range order {
		if err := s.addAttempts(ctx, id, bySub[id]); err != nil {
			errs = append(errs, fmt.Errorf("kvstore: add attempts of %q: %w", wire.Clip(id), err))
		}
	}
	return errors.Join(errs...)
}

// addAttempts prepends as, oldest first, to the log of subID. A batch
// that fills the log by itself (a busy subscription's) replaces it without
// reading it: one write instead of a read, a decode and a compare-and-set.
func (s *Store) addAttempts(ctx context.Context, subID string, as []hub.Attempt) error {
	k, err := key("subscription ID", subID)
	if err != nil {
		return err
	}
	slices.Reverse(as)
	return s.do(ctx, func(ctx context.Context, b *buckets) error {
		if len(as) >= hub.AttemptLogLen { // the batch alone fills the log: nothing to read
			return putJSON(ctx, b.attempts, k, attemptLog{SubID: subID, Attempts: as[:hub.AttemptLogLen]})
		}
		for range maxCASAttempts {
			log := attemptLog{SubID: subID}
			rev, err := getJSON(ctx, b.attempts, k, &log)
			if err != nil && !errors.Is(err, hub.ErrNotFound) {
				return err
			}
			log.Attempts = append(slices.Clip(as), log.Attempts...)
			log.Attempts = log.Attempts[:min(len(log.Attempts), hub.AttemptLogLen)]
			conflict, err := casJSON(ctx, b.attempts, k, rev, log)
			if err != nil || !conflict {
				return err
			}
		}
		return errors.New("attempt log kept changing")
	})
}

// Attempts returns the attempt log of subID, newest first.
func (s *Store) Attempts(ctx context.Context, subID string) ([]hub.Attempt, error) {
	log, err := get[attemptLog](ctx, s, func(b *buckets) jetstream.KeyValue { return b.attempts }, "subscription ID", subID, "attempts of")
	if errors.Is(err, hub.ErrNotFound) {
		return []hub.Attempt{}, nil
	}
	if err != nil {
		return nil, err
	}
	if log.Attempts == nil {
		log.Attempts = []hub.Attempt{}
	}
	return log.Attempts, nil
}
