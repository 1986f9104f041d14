package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rshub/rshub/wire"
)

// claimScript takes the lease for ARGV[1] when it is free, or extends it
// when ARGV[1] owns it, for ARGV[2] milliseconds; 1 when owned after.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// releaseScript deletes the lease only when ARGV[1] owns it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// Claim takes the lease key for owner or renews it, in one owner-checked
// script (one command, where SET NX then a renewal took two for every
// renewal), and reports whether owner holds it afterwards. Expiry runs on
// the Redis server's clock.
func (s *Store) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	ttl = max(ttl, time.Millisecond)
	k, err := s.dkey("claim", "lease key", key)
	n := 0
	if err == nil {
		n, err = claimScript.Run(ctx, s.leases, []string{k}, owner, ttl.Milliseconds()).Int()
	}
	if err != nil {
		return false, fmt.Errorf("redisstore: claim %q: %w", wire.Clip(key), err)
	}
	return n == 1, nil
}

// Release frees the lease key if owner holds it.
func (s *Store) Release(ctx context.Context, key, owner string) error {
	k, err := s.dkey("claim", "lease key", key)
	if err == nil {
		err = releaseScript.Run(ctx, s.leases, []string{k}, owner).Err()
	}
	if err != nil {
		return fmt.Errorf("redisstore: release %q: %w", wire.Clip(key), err)
	}
	return nil
}
