// Package delivery is the webhook engine (WebSub): an HTTP POST per
// notification to each subscription's callback, delivered at least once and
// in log order from a per-subscription cursor.
//
//   - Signing: X-Hub-Signature, or Standard Webhooks, when the subscription
//     has a secret.
//   - Queues and sharding: each subscription has its own queue; queues are
//     spread over shards whose ownership hubs of a cluster claim in the
//     store, so each subscription is delivered by one hub at a time.
//   - Retries: a schedule with backoff and jitter (ParseSchedule); when
//     retries run out the notification is set aside as a dead letter, which
//     the operator can redrive.
//   - Isolation: each callback host has its own concurrency limit, which
//     adapts to how the host answers and honours Retry-After
//     (hostadapt.go), and circuit breaker, so one failing or slow endpoint
//     delays no one else.
//   - Cursors: stored in batches, off the delivery path (cursor.go).
//   - Filters: a subscription's prefix and change filters keep only
//     matching entries; Atom subscriptions get notifications re-encoded as
//     Atom.
//   - Coalescing: a subscription far behind receives each run of change
//     notifications as one (logcache.CoalesceLog), with its filter applied first.
//   - Stats and wake-ups: an index of queues in trouble for the admin API
//     and metrics, and a wake index that starts only the queues whose
//     channel got new records.
//
// Live sessions (WebSocket, Server-Sent Events) are package live; NATS
// needs no engine: the log's own stream and subjects are it (package
// hub/jslog writes them, package wire names them).
//
// Subscription state belongs to the hub; delivery reads it from a Store and
// writes only cursors, dead letters and ownership claims.
package delivery
