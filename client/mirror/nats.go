package mirror

import (
	"bytes"
	"cmp"
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
	// CoalesceThreshold: a session that starts more than this many
	// messages behind the stream applies its backlog coalesced (see
	// RunNATS); 0 is DefaultCoalesceThreshold, negative never coalesces.
	CoalesceThreshold int
}

// DefaultCoalesceThreshold is NATSConfig.CoalesceThreshold's default.
const DefaultCoalesceThreshold = 1000

// RunNATS consumes the channel's subject from the hub's JetStream stream,
// replaying after the state's sequence (or from the stream's start), and
// applies each notification until ctx ends. NATS subjects carry every
// entry: Config.Filter is applied here, by the consumer, before the
// notification is applied (with its from and until, so continuity holds). An ordered consumer resumes by
// itself after a connection loss.
//
// A session that finds more than CoalesceThreshold messages pending is
// catching up: until none is pending, notifications the mirror already
// holds (until at or before its position) are skipped, and the following
// ones are coalesced (changefeed.Coalesce: the net change per resource,
// at most 50,000 entries at a time) and applied as one: a resource
// changed many times in the backlog is fetched once.
func (m *Mirror) RunNATS(ctx context.Context, cfg NATSConfig) error {
	cfg.Stream = cmp.Or(cfg.Stream, wire.Stream)
	if err := m.retry(ctx, "start-up catch-up", func() error { return m.Start(ctx) }); err != nil {
		return err
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("rshub-subscriber"), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		return fmt.Errorf("mirror: connect to NATS %s: %w", wire.RedactURLs(cfg.URL), err)
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
	if fw := m.frameworkChannel(ctx, cfg.Channel, false); fw != "" {
		occ.FilterSubjects = append(occ.FilterSubjects, wire.Subject(cfg.Prefix, fw))
	}
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
	threshold := cfg.CoalesceThreshold
	threshold = cmp.Or(threshold, DefaultCoalesceThreshold)
	cu := natsCatchUp{m: m, co: newCoalescer(0)}
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
		seq := md.Sequence.Stream
		if !cu.on && threshold > 0 && md.NumPending >= uint64(threshold) {
			cu.on = true
			m.emit(Event{Kind: EventInfo, Seq: seq, Message: fmt.Sprintf("%d messages behind: applying the backlog coalesced", md.NumPending+1)})
		}
		doc, err := changefeed.Parse(bytes.NewReader(msg.Data()), changefeed.Options{Mode: changefeed.Lenient})
		if err != nil {
			if err := cu.flush(ctx); err != nil {
				return got, err
			}
			m.emit(Event{Kind: EventSkipped, Seq: seq, Message: "unreadable notification: " + err.Error()})
			continue
		}
		if IsFramework(doc) { // never filtered nor coalesced
			if err := cu.flush(ctx); err != nil {
				return got, err
			}
			if err := m.ApplyRetrying(ctx, UpdateOf(doc, seq, "nats")); err != nil {
				return got, err
			}
			continue
		}
		doc = m.cfg.Filter.Apply(doc)
		if cu.on {
			done, err := cu.add(ctx, doc, seq, md.NumPending)
			if err != nil {
				return got, err
			}
			if done {
				continue
			}
		}
		if err := m.ApplyRetrying(ctx, UpdateOf(doc, seq, "nats")); err != nil {
			return got, err
		}
	}
}

// natsCatchUp coalesces a NATS session's backlog.
type natsCatchUp struct {
	m       *Mirror
	co      *coalescer
	on      bool
	skipped uint64 // the last message skipped as already applied
}

// add takes doc, the message seq with pending messages after it, into the
// backlog; done false means doc is to be applied as it is (after what was
// coalesced before it, which add applied).
func (c *natsCatchUp) add(ctx context.Context, doc *changefeed.Document, seq, pending uint64) (done bool, err error) {
	defer func() {
		if pending == 0 && err == nil {
			c.on = false
			err = c.flush(ctx)
		}
	}()
	p := c.m.State().Until
	if c.co.docs == 0 && !p.IsZero() && !doc.MD.Until.IsZero() && !doc.MD.Until.Time.After(p) {
		c.skipped = seq
		return true, nil // already applied: skipped without a state write
	}
	if c.co.docs == 0 && (p.IsZero() || doc.MD.From.Time.Before(p)) {
		return false, nil // straddles the position: applied alone, so a run starts at or after it
	}
	if !c.co.fits(doc) {
		if err := c.flush(ctx); err != nil {
			return false, err
		}
		if !c.co.fits(doc) {
			return false, nil
		}
	}
	return true, c.co.add(doc, seq)
}

// flush applies what was coalesced.
func (c *natsCatchUp) flush(ctx context.Context) error {
	doc, first, last, n, err := c.co.take()
	if err != nil {
		return err
	}
	if doc == nil {
		if c.skipped == 0 {
			return nil
		}
		seq := c.skipped
		c.skipped = 0
		return c.m.noteSeq(seq)
	}
	c.m.emit(Event{Kind: EventInfo, Seq: last, From: doc.MD.From.Time, Until: doc.MD.Until.Time, Entries: len(doc.Entries),
		Message: fmt.Sprintf("%d notifications (%d to %d) coalesced", n, first, last)})
	return c.m.ApplyRetrying(ctx, UpdateOf(doc, last, "nats-coalesced"))
}

// noteSeq records that the notifications up to the log sequence seq were
// seen.
func (m *Mirror) noteSeq(seq uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq <= m.st.Seq {
		return nil
	}
	m.st.Seq = seq
	return m.save()
}
