// Package hub is the WebSub hub of rshub: channels, subscriptions and their
// lifecycle (verify, lease, renew, deny, expire), publish intake, and the
// HTTP surface at the hub URL. It declares the durable Log and the state
// Store it needs; adapters for NATS JetStream and Redis live in
// sub-packages and depend on this one, never the reverse.
package hub
