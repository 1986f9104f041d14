// Package logcache keeps the newest records of a hub.Log in memory so that
// many readers following the log — webhook queues, WebSocket sessions — are
// answered without a round trip to the log per reader and per record.
//
// A Cache wraps a hub.Log and is itself a hub.Log. One goroutine, Run,
// follows the underlying log: every time the log announces an append it
// reads the new records once, in sequence order, into a ring bounded by a
// record count and a byte budget, evicting the oldest. Next answers from
// the ring when the asked sequence is inside it, and answers hub.ErrNotFound
// from memory when the ring already holds everything the follower has seen;
// only readers that fell behind the ring reach the underlying log.
//
// Changed is the cache's own signal: it is closed after the cache has
// absorbed new records, so a reader woken by it finds them with Next.
// Readers follow the usual hub.Log pattern:
//
//	for {
//		changed := c.Changed()
//		rec, err := c.Next(ctx, channel, cursor+1)
//		if errors.Is(err, hub.ErrNotFound) {
//			select {
//			case <-changed:
//			case <-ctx.Done():
//				return ctx.Err()
//			}
//			continue
//		}
//		...
//		cursor = rec.Seq
//	}
//
// Records returned by Next share their Body with the cache and with every
// other reader: callers must not modify it.
package logcache
