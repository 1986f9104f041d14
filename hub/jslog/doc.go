// Package jslog keeps the hub's notification log in a NATS JetStream stream.
// It implements hub.Log, and its subjects and headers are the hub's public
// NATS interface: a pipeline reads notifications with any NATS client.
//
// # Subjects
//
// Every notification is one message in the stream (default name "RSHUB") on
// the subject
//
//	<prefix>.<channel name>        for example rshub.notify.arxiv
//
// where the prefix defaults to "rshub.notify". The stream captures
// "<prefix>.>", so a channel name is a subject token: no spaces, "*" or
// ">"; a "." in a name makes deeper subject levels. The stream sequence is
// the hub's log sequence, shared by all channels.
//
// # Messages
//
// The message body is the notification exactly as stored (usually a
// ResourceSync Change List fragment in XML). Headers carry the metadata:
//
//	Nats-Msg-Id         idempotency key; JetStream drops a repeat inside the
//	                    stream's duplicate window (default 10 minutes)
//	Rshub-Topic         topic URI of the channel
//	Rshub-Channel       channel name (the last part of the subject)
//	Rshub-From          ResourceSync "from" of the notification, RFC 3339
//	                    with nanoseconds; absent when unknown
//	Rshub-Until         ResourceSync "until", same format; absent when unknown
//	Content-Type        media type of the body
//	Rshub-Received      when the hub accepted it, RFC 3339 with nanoseconds
//	Rshub-Resourcesync  the rel="resourcesync" link the Source sent, if any
//	Rshub-Entries       number of <url> entries of a ResourceSync
//	                    notification, decimal; absent when 0 or unknown
//
// A value of Nats-Msg-Id, Rshub-Topic, Rshub-Channel, Content-Type or
// Rshub-Resourcesync that is not printable ASCII without leading or
// trailing spaces (it holds CR, LF, NUL or another control character,
// non-ASCII text or invalid UTF-8), or that starts with "=?", is sent as an
// RFC 2047 encoded word: "=?UTF-8?B?", the standard base64 of the value's
// bytes, "?=". Plain values, the usual case, are sent as they are. No value
// can inject a header line or end the header block, and none is altered by
// a client's sanitising. Each of those values is at most MaxHeaderValue
// bytes (Append refuses a longer one), which keeps a message's headers
// below JetStream's 64 KiB limit.
//
// DecodeMsg turns such a message back into a hub.Record, decoding encoded
// values (DecodeHeaderValue decodes one).
//
// # Consuming
//
// Live, with core NATS (no acknowledgement, no replay):
//
//	nc.Subscribe("rshub.notify.arxiv", func(m *nats.Msg) { ... })
//
// Replay from a log sequence or a time, then follow, with a JetStream
// consumer:
//
//	js, _ := jetstream.New(nc)
//	c, _ := js.OrderedConsumer(ctx, "RSHUB", jetstream.OrderedConsumerConfig{
//		FilterSubjects: []string{"rshub.notify.arxiv"},
//		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
//		OptStartSeq:    cursor + 1,
//	})
//	c.Consume(func(m jetstream.Msg) {
//		md, _ := m.Metadata()
//		rec, err := jslog.DecodeMsg(m.Subject(), m.Headers(), m.Data(), md.Sequence.Stream)
//		...
//	})
//
// Use DeliverByStartTimePolicy with OptStartTime to start from a Source
// datetime's receipt time instead. Records older than the stream's MaxAge or
// beyond its MaxBytes are removed; a consumer starting before the first
// held sequence begins at the first one, so compare sequences to detect
// the gap.
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
