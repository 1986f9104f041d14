package kvstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/backoff"
	"github.com/rshub/rshub/wire"
)

// lease is the value of a lease key; Key is the lease key itself, as data.
type lease struct {
	Key     string    `json:"key,omitempty"`
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Claim takes the lease key for owner when it is free or expired, renews
// it when owner holds it, and reports whether owner holds it afterwards.
func (s *Store) Claim(ctx context.Context, leaseKey, owner string, ttl time.Duration) (bool, error) {
	k, err := key("lease key", leaseKey)
	held := false
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			for attempt := range maxCASAttempts {
				var cur lease
				rev, err := getJSON(ctx, b.leases, k, &cur)
				if err != nil && !errors.Is(err, hub.ErrNotFound) {
					return err
				}
				now := time.Now()
				if rev != 0 && cur.Owner != owner && now.Before(cur.Expires) {
					return nil
				}
				conflict, err := casJSON(ctx, b, b.leases, k, rev, lease{Key: leaseKey, Owner: owner, Expires: now.Add(ttl)})
				if err != nil {
					return err
				}
				if !conflict {
					held = true
					return nil
				}
				if err := backoff.Wait(ctx, attempt); err != nil {
					return err
				}
			}
			return fmt.Errorf("still contended after %d attempts", maxCASAttempts)
		})
	}
	if err != nil {
		return false, fmt.Errorf("kvstore: claim %q: %w", wire.Clip(leaseKey), err)
	}
	return held, nil
}

// Release frees the lease key if owner holds it.
func (s *Store) Release(ctx context.Context, leaseKey, owner string) error {
	k, err := key("lease key", leaseKey)
	if err == nil {
		err = s.do(ctx, func(ctx context.Context, b *buckets) error {
			var cur lease
			rev, err := getJSON(ctx, b.leases, k, &cur)
			if errors.Is(err, hub.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if cur.Owner != owner {
				return nil
			}
			err = b.leases.Delete(ctx, k, jetstream.LastRevision(rev))
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				return nil // taken over after expiry meanwhile: no longer ours to release
			}
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("kvstore: release %q: %w", wire.Clip(leaseKey), err)
	}
	return nil
}
