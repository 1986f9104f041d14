// Package delivery holds the transports that carry notifications from the
// hub's log to destinations:
//
//   - Webhooks (WebSub): an HTTP POST per notification to each
//     subscription's callback, signed with X-Hub-Signature when the
//     subscription has a secret, delivered at least once and in log order
//     from a per-subscription cursor, retried with backoff and jitter, and
//     set aside as a dead letter when retries run out. Each subscription has
//     its own queue, each callback host its own concurrency limit and circuit
//     breaker, so one failing or slow endpoint delays no one else.
//   - WebSockets: sessions that replay the log from a cursor (a sequence or
//     a Source datetime) and then follow it live, with JSON frames, explicit
//     gap frames and a bounded send queue (package wire describes the
//     protocol).
//
// NATS needs no transport here: the log's own stream and subjects are it
// (package hub/jslog writes them, package wire names them and decodes
// their messages), consumed live or replayed through JetStream with plain
// nats.go.
//
// Subscription state belongs to the hub; delivery reads it from a Store and
// writes only cursors, dead letters and ownership claims.
package delivery
