// Package bench measures the hub against the machine's own ceiling in the
// same run, so its figures are ratios rather than absolutes that depend on
// whatever else the machine is doing.
//
// Each scenario starts a whole hub in-process (package server with embedded
// NATS, loopback only, a temporary data directory), drives it with bounded
// load, and then drives a minimal hub-less baseline of the same transport
// with the same payloads, concurrency and receivers:
//
//   - webhook: WebSub fan-out of fat pings to loopback callbacks, against
//     raw net/http POSTs of the same bodies at the same concurrency;
//   - websocket: fan-out to idle-then-live WebSocket clients in a child
//     process, against a raw gorilla/websocket broadcast server, plus the
//     hub's memory per idle connection;
//   - nats: publish to a plain NATS subscriber on rshub.notify.<channel>,
//     against raw JetStream and core NATS publish on the same server.
//
// Every scenario repeats Config.Runs times; the report gives, per figure,
// the median of the hub's values, the median of the ceiling's values and
// the median of the per-run ratios hub/ceiling. Every load loop is bounded
// in count and in time.
package bench
