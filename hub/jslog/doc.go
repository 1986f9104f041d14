// Package jslog keeps the hub's notification log in a NATS JetStream stream.
// It implements hub.Log, and its stream, subjects and headers are the hub's
// public NATS interface: a pipeline reads notifications with any NATS
// client. The interface itself (stream and subject names, headers and their
// encoding, how to consume) is the protocol's, documented in package wire;
// this package is the hub's side of it.
//
// # Stream
//
// Config names the stream (default wire.Stream) and the subject prefix
// (default wire.SubjectPrefix). The stream captures wire.Subject(prefix,
// ""), so a channel name is a subject token, and the stream sequence is the
// hub's log sequence, shared by all channels. Append publishes a record on
// wire.Subject(prefix, channel) with the headers of wire.EncodeRecord
// (EncodeHeaders gives them as a nats.Header) and the record's key as
// Nats-Msg-Id, so JetStream drops a repeat inside the stream's duplicate
// window (Config.DuplicateWindow, default 10 minutes); a field longer than
// wire.MaxHeaderValue is refused (wire.CheckRecord). DecodeMsg turns a
// message back into a wire.Record. Records older than the stream's MaxAge or
// beyond its MaxBytes are removed.
//
// # Connections
//
// A Log opened with OpenConn on a natsconn.Conn survives its connection:
// when the Conn replaces a connection that ended up CLOSED, the Log
// rebuilds its stream handle and its append watcher (at once in the
// background, or on the next operation), and wakes every Changed waiter to
// look for appends it may have missed. While the Conn is disconnected,
// operations fail at once with an error wrapping natsconn.ErrDisconnected.
// Open on a plain *nats.Conn uses that connection as it is.
package jslog
