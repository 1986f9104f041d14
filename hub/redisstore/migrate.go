package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/rshub/rshub/wire"
)

// moveScript moves KEYS[1] to KEYS[2]: a rename when KEYS[2] does not
// exist, otherwise a merge in which what KEYS[2] holds wins (a set's or
// sorted set's members are united, a hash's fields added when missing, a
// string dropped). 0 when KEYS[1] no longer exists.
var moveScript = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 1
end
if t == 'set' then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
elseif t == 'zset' then
  redis.call('ZUNIONSTORE', KEYS[2], 2, KEYS[2], KEYS[1], 'AGGREGATE', 'MAX')
elseif t == 'hash' then
  local kv = redis.call('HGETALL', KEYS[1])
  for i = 1, #kv, 2 do redis.call('HSETNX', KEYS[2], kv[i], kv[i + 1]) end
end
redis.call('DEL', KEYS[1])
return 1
`)

// oldKinds maps the kinds of key names of earlier versions, which ended
// in the raw string, to the current kinds, which end in its digest.
var oldKinds = []struct{ old, cur string }{
	{"chstate", "state"},
	{"subtopic", "topicsubs"},
	{"lease", "claim"},
	{"dead", "deadseq"},
	{"deadv", "deadval"},
}

// migrate renames the keys of earlier versions. The old and current kinds
// differ, so a key is never mistaken for the other layout, and running it
// again finds nothing to do.
func (s *Store) migrate(ctx context.Context) error {
	for _, k := range oldKinds {
		head := s.prefix + ":" + k.old + ":"
		moved := 0
		iter := s.rdb.Scan(ctx, 0, globEscape(head)+"*", 256).Iterator()
		for iter.Next(ctx) {
			old := iter.Val()
			str, ok := strings.CutPrefix(old, head)
			if !ok || str == "" {
				continue
			}
			if err := moveScript.Run(ctx, s.rdb, []string{old, s.key(k.cur, digest(str))}).Err(); err != nil {
				return fmt.Errorf("migrate %q: %w", wire.Clip(old), err)
			}
			moved++
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("migrate %s keys: %w", k.old, err)
		}
		if moved > 0 {
			s.log.Info("redisstore: migrated keys to digests", "kind", k.old, "keys", moved)
		}
	}
	return nil
}

// globEscape quotes the characters special in a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if strings.IndexByte(`*?[]\^`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
