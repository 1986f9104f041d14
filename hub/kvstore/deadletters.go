package kvstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// deadKey returns the key of dead letter id of subscription subID.
func deadKey(subID, id string) (string, error) {
	s, err := key("subscription ID", subID)
	if err != nil {
		return "", err
	}
	d, err := key("dead letter ID", id)
	if err != nil {
		return "", err
	}
	return s + "." + d, nil
}

// AddDeadLetter stores d under its subscription.
func (s *Store) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	k, err := deadKey(d.SubID, d.ID)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error { return putJSON(ctx, b.dead, k, d) })
	}
	if err != nil {
		return fmt.Errorf("kvstore: add dead letter %q/%q: %w", wire.Clip(d.SubID), wire.Clip(d.ID), err)
	}
	return nil
}

// DeadLetters lists the dead letters of subID ordered by Seq.
func (s *Store) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	var vals [][]byte
	k, err := key("subscription ID", subID)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) (err error) {
			if none, err := noDeadLetters(ctx, b, k); err != nil || none {
				return err
			}
			vals, err = entries(ctx, b.dead, k+".*")
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("kvstore: dead letters %q: %w", wire.Clip(subID), err)
	}
	out := make([]hub.DeadLetter, 0, len(vals))
	for _, v := range vals {
		var d hub.DeadLetter
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("kvstore: dead letters %q: %w", wire.Clip(subID), err)
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
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			e, err := b.dead.Get(ctx, k)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				return hub.ErrNotFound
			}
			if err == nil {
				err = b.dead.Delete(ctx, k, jetstream.LastRevision(e.Revision()))
			}
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				// Deleted (or re-added) by another writer in between.
				return hub.ErrNotFound
			}
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: delete dead letter %q/%q: %w", wire.Clip(subID), wire.Clip(id), err)
	}
	return nil
}

// noDeadLetters reports whether the dead bucket holds no key of the
// subscription with key token k, asking the stream for the subjects under
// it: one request, where a scan creates a consumer (a hub starting 100,000
// queues read every subscription's dead letters that way). A subject with
// only a delete marker still counts, so the caller scans then.
func noDeadLetters(ctx context.Context, b *buckets, k string) (bool, error) {
	if b.deadStream == nil {
		return false, nil
	}
	info, err := b.deadStream.Info(ctx, jetstream.WithSubjectFilter(b.deadSubjects+k+".*"))
	if err != nil {
		return false, err
	}
	return len(info.State.Subjects) == 0, nil
}

// DeliveryStates reads what a delivery queue starting for each of ids
// reads, for many at once: the stored cursors (a subscription without one
// is absent) in one pass over the cursors (scanPaged), and which subscriptions may
// hold dead letters in one request for the dead letters' subjects (one
// absent holds none; one present may, a deleted dead letter leaving its
// subject behind: read its dead letters to know).
func (s *Store) DeliveryStates(ctx context.Context, ids []string) (cursors map[string]hub.Cursor, mayHaveDead map[string]bool, err error) {
	byKey := make(map[string]string, len(ids)) // key token → ID
	for _, id := range ids {
		k, err := key("subscription ID", id)
		if err != nil {
			return nil, nil, fmt.Errorf("kvstore: delivery states: %w", err)
		}
		byKey[k] = id
	}
	cursors, mayHaveDead = map[string]hub.Cursor{}, map[string]bool{}
	err = s.do(ctx, func(ctx context.Context, b *buckets) error {
		clear(cursors)
		clear(mayHaveDead)
		err := scanPaged(ctx, b.cursors, b.cursorsStream, false, func(key string, val []byte, _ uint64) error {
			id, ok := byKey[key]
			if !ok {
				return nil
			}
			var v cursorValue
			if err := json.Unmarshal(val, &v); err != nil {
				return fmt.Errorf("decode cursor %s: %w", key, err)
			}
			cursors[id] = v.Cursor
			return nil
		})
		if err != nil {
			return err
		}
		return deadSubjects(ctx, b, func(k string) {
			if id, ok := byKey[k]; ok {
				mayHaveDead[id] = true
			}
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("kvstore: delivery states: %w", err)
	}
	return cursors, mayHaveDead, nil
}

// deadSubjects calls fn with the key token of each subscription that has
// a subject in the dead bucket: from the stream's subjects in one request,
// or, without the stream's handle, from a scan of the bucket's keys.
func deadSubjects(ctx context.Context, b *buckets, fn func(k string)) error {
	if b.deadStream == nil {
		return scanEach(ctx, b.dead, ">", true, func(e jetstream.KeyValueEntry) error {
			k, _, _ := strings.Cut(e.Key(), ".")
			fn(k)
			return nil
		})
	}
	info, err := b.deadStream.Info(ctx, jetstream.WithSubjectFilter(b.deadSubjects+">"))
	if err != nil {
		return err
	}
	for subj := range info.State.Subjects {
		k, _, _ := strings.Cut(strings.TrimPrefix(subj, b.deadSubjects), ".")
		fn(k)
	}
	return nil
}
