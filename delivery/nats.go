package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
)

// The NATS transport is the log itself: every notification is a message on
// <prefix>.<channel> (rshub.notify.<channel> by default) in the log's
// JetStream stream, with the headers documented in package jslog. Live
// consumers subscribe to the subject with core NATS; consumers that replay
// from a cursor use a JetStream consumer, which ConsumerFor creates, and
// turn messages back into records with DecodeJS.

// NATSStart says where ConsumerFor starts.
type NATSStart struct {
	// Seq is the first log sequence to deliver: a cursor plus one.
	Seq uint64
	// Time, when Seq is 0, starts at the first message the stream stored at
	// or after it (receipt time at the hub, not the Source's until).
	Time time.Time
	// With neither, the consumer delivers only messages stored after it
	// was created.
}

// NATSSubject returns the subject of channel's records under prefix
// (jslog.DefaultSubjectPrefix when empty); channel "" names every channel.
func NATSSubject(prefix, channel string) string {
	if prefix == "" {
		prefix = jslog.DefaultSubjectPrefix
	}
	if channel == "" {
		return prefix + ".>"
	}
	return prefix + "." + channel
}

// ConsumerFor creates an ordered JetStream consumer on stream (the log's,
// jslog.DefaultStream when empty) that delivers the messages on subject in
// log order from start. An ordered consumer keeps no state on the server;
// the caller's cursor is the last delivered stream sequence. When start.Seq
// is older than the stream's retention, delivery begins at the first
// sequence the stream holds: a first message with a sequence above
// start.Seq, on a stream whose first sequence is above it too, names the
// gap (compare with the stream's info).
func ConsumerFor(ctx context.Context, js jetstream.JetStream, stream, subject string, start NATSStart) (jetstream.Consumer, error) {
	if stream == "" {
		stream = jslog.DefaultStream
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverNewPolicy}
	switch {
	case start.Seq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start.Seq
	case !start.Time.IsZero():
		t := start.Time
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	c, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("nats: consumer on %s %s: %w", stream, subject, err)
	}
	return c, nil
}

// DecodeJS turns a message from a JetStream consumer of the log into the
// record it carries, with its log sequence.
func DecodeJS(m jetstream.Msg) (hub.Record, error) {
	md, err := m.Metadata()
	if err != nil {
		return hub.Record{}, fmt.Errorf("nats: metadata: %w", err)
	}
	return jslog.DecodeMsg(m.Subject(), m.Headers(), m.Data(), md.Sequence.Stream)
}
