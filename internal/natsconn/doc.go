// Package natsconn owns "the current NATS connection" of a process and keeps
// one alive for as long as it is needed.
//
// nats.go reconnects a connection by itself after a network failure, but
// some events end a connection for good: a fatal -ERR from the server (for
// example "maximum control line exceeded"), an authorization failure, or
// some code calling Close on it. Such a connection stays CLOSED, and every
// JetStream handle built on it fails from then on. A Conn watches its
// connection and, when it ends up CLOSED, dials a new one (with backoff,
// forever, until its context ends or Close is called). Each new connection
// gets the next generation number: users keep the generation their
// JetStream handles were built for and rebuild them when it changes.
//
// Conn.Do runs an operation on the current connection and fails fast, with
// an error wrapping ErrDisconnected, while there is none or it is
// reconnecting, and as soon as it is lost during the operation: a caller
// answers "unavailable" at once rather than waiting out a timeout.
// Status reports what a health check needs: connected or not, since when,
// and the last error.
package natsconn
