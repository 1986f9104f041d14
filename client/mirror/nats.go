package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// NATSConfig says where the hub's log stream is.
type NATSConfig struct {
	URL     string // NATS server URL(s)
	Stream  string // default wire.Stream
	Prefix  string // subject prefix, default wire.SubjectPrefix
	Channel string // the hub's channel name
}

// RunNATS consumes the channel's subject from the hub's JetStream stream,
// replaying after the state's sequence (or from the stream's start), and
// applies each notification until ctx ends. NATS subjects carry every
// entry: Config.Filter is applied here, by the consumer, before the
// notification is applied (with its from and until, so continuity holds). An ordered consumer resumes by
// itself after a connection loss.
func (m *Mirror) RunNATS(ctx context.Context, cfg NATSConfig) error {
	if cfg.Stream == "" {
		cfg.Stream = wire.Stream
	}
	if err := m.retry(ctx, "start-up catch-up", func() error { return m.Start(ctx) }); err != nil {
		return err
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("rshub-subscriber"), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return fmt.Errorf("mirror: connect to NATS %s: %w", cfg.URL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("mirror: JetStream: %w", err)
	}
	for n := 1; ; n++ {
		ok, err := m.natsSession(ctx, js, cfg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ok {
			n = 1
		}
		pause := retryPause(n)
		m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("NATS consumer ended (%v); again in %s", err, pause)})
		if !sleep(ctx, pause) {
			return ctx.Err()
		}
	}
}

// natsSession reads from one ordered consumer; ok says it got something.
func (m *Mirror) natsSession(ctx context.Context, js jetstream.JetStream, cfg NATSConfig) (bool, error) {
	occ := jetstream.OrderedConsumerConfig{FilterSubjects: []string{wire.Subject(cfg.Prefix, cfg.Channel)}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if seq := m.State().Seq; seq > 0 {
		occ.DeliverPolicy, occ.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq+1
	}
	c, err := js.OrderedConsumer(ctx, cfg.Stream, occ)
	if err != nil {
		return false, err
	}
	it, err := c.Messages()
	if err != nil {
		return false, err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	m.emit(Event{Kind: EventInfo, Message: "NATS consumer on " + occ.FilterSubjects[0]})
	got := false
	for {
		msg, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() != nil {
				return got, ctx.Err()
			}
			return got, err
		}
		got = true
		md, err := msg.Metadata()
		if err != nil {
			return got, err
		}
		doc, err := changefeed.Parse(bytes.NewReader(msg.Data()), changefeed.Options{Mode: changefeed.Lenient})
		if err != nil {
			m.emit(Event{Kind: EventSkipped, Seq: md.Sequence.Stream, Message: "unreadable notification: " + err.Error()})
			continue
		}
		doc = m.cfg.Filter.Apply(doc)
		if err := m.ApplyRetrying(ctx, UpdateOf(doc, md.Sequence.Stream, "nats")); err != nil {
			return got, err
		}
	}
}
