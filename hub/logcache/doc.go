// Package logcache keeps the newest records of a hub.Log in memory so that
// many readers following the log — webhook queues, live sessions, pull mode — are
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
// absorbed new records. Readers do not wait on it themselves: the cache is
// the log's only follower, and every reader follows the cache through a
// Subscription (one channel or all, in order from a resumable position,
// retrying a failing log and reporting its health) or waits for a
// condition with Await:
//
//	sub := logcache.Subscribe(c, cursor, logcache.Options{Channel: channel})
//	for {
//		b, ok := sub.Next(ctx)
//		if !ok {
//			return ctx.Err()
//		}
//		for _, rec := range b.Records {
//			...
//		}
//	}
//
// CoalesceLog reads a run of a channel's change notifications as one, for
// the readers that catch up coalesced.
//
// Records returned by Next share their Body with the cache and with every
// other reader: callers must not modify it.
package logcache
