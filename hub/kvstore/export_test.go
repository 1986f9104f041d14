package kvstore

import "context"

// KeyOf is the key a string (an ID, a topic) is stored under.
func KeyOf(s string) string { return digest(s) }

// CASState is casBytes on the channel states bucket, for tests.
func (s *Store) CASState(ctx context.Context, key string, rev uint64, val []byte) (newRev uint64, conflict bool, err error) {
	err = s.do(ctx, func(ctx context.Context, b *buckets) error {
		newRev, conflict, err = casBytes(ctx, b, b.states, key, rev, val)
		return err
	})
	return newRev, conflict, err
}
