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
// DecodeMsg turns such a message back into a hub.Record.
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
package jslog
