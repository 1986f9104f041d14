package kvstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
)

// lease is the value of a lease key.
type lease struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Claim takes the lease key for owner when it is free or expired, renews
// it when owner holds it, and reports whether owner holds it afterwards.
func (s *Store) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	k, err := enc(key)
	if err != nil {
		return false, fmt.Errorf("kvstore: claim %q: %w", key, err)
	}
	for attempt := range maxCASAttempts {
		var cur lease
		rev, err := getJSON(ctx, s.leases, k, &cur)
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			return false, fmt.Errorf("kvstore: claim %q: %w", key, err)
		}
		now := time.Now()
		if rev != 0 && cur.Owner != owner && now.Before(cur.Expires) {
			return false, nil
		}
		conflict, err := casJSON(ctx, s.leases, k, rev, lease{Owner: owner, Expires: now.Add(ttl)})
		if err != nil {
			return false, fmt.Errorf("kvstore: claim %q: %w", key, err)
		}
		if !conflict {
			return true, nil
		}
		if err := backoff.Wait(ctx, attempt); err != nil {
			return false, fmt.Errorf("kvstore: claim %q: %w", key, err)
		}
	}
	return false, fmt.Errorf("kvstore: claim %q: still contended after %d attempts", key, maxCASAttempts)
}

// Release frees the lease key if owner holds it.
func (s *Store) Release(ctx context.Context, key, owner string) error {
	k, err := enc(key)
	if err != nil {
		return fmt.Errorf("kvstore: release %q: %w", key, err)
	}
	var cur lease
	rev, err := getJSON(ctx, s.leases, k, &cur)
	if errors.Is(err, hub.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kvstore: release %q: %w", key, err)
	}
	if cur.Owner != owner {
		return nil
	}
	err = s.leases.Delete(ctx, k, jetstream.LastRevision(rev))
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return nil // taken over after expiry meanwhile: no longer ours to release
	}
	if err != nil {
		return fmt.Errorf("kvstore: release %q: %w", key, err)
	}
	return nil
}
