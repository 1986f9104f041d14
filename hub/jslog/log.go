package jslog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
)

// Defaults for Config.
const (
	DefaultStream          = "RSHUB"
	DefaultSubjectPrefix   = "rshub.notify"
	DefaultDuplicateWindow = 10 * time.Minute
	// BoundsCacheTTL is how long Bounds reuses the stream's first sequence
	// before asking the server again.
	BoundsCacheTTL = 200 * time.Millisecond
)

// Config configures the log's stream. Open creates the stream or updates
// an existing one to match.
type Config struct {
	Stream          string        // stream name; default "RSHUB"
	SubjectPrefix   string        // records go to <prefix>.<channel>; default "rshub.notify"
	Replicas        int           // default 1 (3 on a cluster)
	MaxAge          time.Duration // 0: unlimited
	MaxBytes        int64         // 0: unlimited
	DuplicateWindow time.Duration // a retried publish with the same Key is stored once; default 10 min
}

// Log is a hub.Log stored in a JetStream stream.
type Log struct {
	cfg    Config
	js     jetstream.JetStream
	stream jetstream.Stream
	watch  *watcher

	mu        sync.Mutex
	first     uint64    // cached first sequence
	last      uint64    // highest sequence seen by any means
	refreshed time.Time // when first was fetched
}

var _ hub.Log = (*Log)(nil)

// Open creates or updates the stream and starts watching it for appends.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Log, error) {
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = DefaultSubjectPrefix
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = DefaultDuplicateWindow
	}
	if cfg.MaxAge > 0 && cfg.DuplicateWindow > cfg.MaxAge {
		cfg.DuplicateWindow = cfg.MaxAge // the server refuses a window beyond MaxAge
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jslog: open: %w", err)
	}
	maxBytes := cfg.MaxBytes
	if maxBytes <= 0 {
		maxBytes = -1
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "rshub notification log",
		Subjects:    []string{cfg.SubjectPrefix + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		MaxAge:      cfg.MaxAge,
		MaxBytes:    maxBytes,
		MaxMsgs:     -1,
		Duplicates:  cfg.DuplicateWindow,
		// Direct gets may be answered by any replica, which can lag the
		// leader; Next must see what Changed announced, so only a single
		// replica uses them.
		AllowDirect: cfg.Replicas == 1,
	})
	if err != nil {
		return nil, fmt.Errorf("jslog: open stream %s: %w", cfg.Stream, err)
	}
	l := &Log{cfg: cfg, js: js, stream: st}
	l.watch, err = startWatcher(ctx, js, cfg.Stream, cfg.SubjectPrefix+".>", l.observe)
	if err != nil {
		return nil, fmt.Errorf("jslog: open: %w", err)
	}
	return l, nil
}

// Close stops the change watcher. It does not close the connection.
func (l *Log) Close() error {
	l.watch.stop()
	return nil
}

// Subject returns the subject of channel's records.
func (l *Log) Subject(channel string) string {
	return l.cfg.SubjectPrefix + "." + channel
}

// Append publishes rec on its channel's subject and waits for the stream's
// acknowledgement. rec.Received is set to now when zero.
func (l *Log) Append(ctx context.Context, rec hub.Record) (uint64, bool, error) {
	return l.publish(ctx, rec)
}

// AppendAfter is Append on the condition that the channel's last record is
// still lastSeq (0: the channel has none). Otherwise nothing is stored and
// the error wraps hub.ErrConflict: another writer appended first.
func (l *Log) AppendAfter(ctx context.Context, rec hub.Record, lastSeq uint64) (uint64, bool, error) {
	return l.publish(ctx, rec, jetstream.WithExpectLastSequencePerSubject(lastSeq))
}

func (l *Log) publish(ctx context.Context, rec hub.Record, opts ...jetstream.PublishOpt) (uint64, bool, error) {
	if err := validChannel(rec.Channel); err != nil {
		return 0, false, fmt.Errorf("jslog: append: %w", err)
	}
	if rec.Received.IsZero() {
		rec.Received = time.Now().UTC()
	}
	msg := &nats.Msg{Subject: l.Subject(rec.Channel), Header: EncodeHeaders(rec), Data: rec.Body}
	if rec.Key != "" {
		opts = append(opts, jetstream.WithMsgID(rec.Key))
	}
	ack, err := l.publishAsync(ctx, msg, opts...)
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
			return 0, false, fmt.Errorf("jslog: append to %s: %w: %v", msg.Subject, hub.ErrConflict, err)
		}
		return 0, false, fmt.Errorf("jslog: append to %s: %w", msg.Subject, err)
	}
	l.observe(ack.Sequence)
	if !ack.Duplicate {
		l.watch.notify()
	}
	return ack.Sequence, ack.Duplicate, nil
}

// Next returns the first record of channel (any channel when channel is "")
// with a sequence of at least seq, or hub.ErrNotFound.
func (l *Log) Next(ctx context.Context, channel string, seq uint64) (hub.Record, error) {
	subj := l.cfg.SubjectPrefix + ".>"
	if channel != "" {
		if err := validChannel(channel); err != nil {
			return hub.Record{}, fmt.Errorf("jslog: next: %w", err)
		}
		subj = l.Subject(channel)
	}
	if seq == 0 {
		seq = 1
	}
	m, err := l.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return hub.Record{}, fmt.Errorf("jslog: next %s from %d: %w", subj, seq, hub.ErrNotFound)
	}
	if err != nil {
		return hub.Record{}, fmt.Errorf("jslog: next %s from %d: %w", subj, seq, err)
	}
	rec, err := DecodeMsg(m.Subject, m.Header, m.Data, m.Sequence)
	if err != nil {
		return hub.Record{}, fmt.Errorf("jslog: next: seq %d: %w", m.Sequence, err)
	}
	l.observe(m.Sequence)
	return rec, nil
}

// Bounds returns the first and last sequence the stream holds, (0, 0) when
// nothing was ever appended. When retention removed every record, first
// is last+1. The first sequence may be up to BoundsCacheTTL old; the last
// includes every append this process saw.
func (l *Log) Bounds(ctx context.Context) (uint64, uint64, error) {
	l.mu.Lock()
	if !l.refreshed.IsZero() && time.Since(l.refreshed) < BoundsCacheTTL {
		first, last := l.first, l.last
		l.mu.Unlock()
		return first, last, nil
	}
	l.mu.Unlock()
	info, err := l.stream.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("jslog: bounds: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.first = info.State.FirstSeq
	l.last = max(l.last, info.State.LastSeq)
	l.refreshed = time.Now()
	if l.last == 0 {
		return 0, 0, nil
	}
	return l.first, l.last, nil
}

// Size returns how many records and bytes the stream holds.
func (l *Log) Size(ctx context.Context) (msgs, bytes uint64, err error) {
	info, err := l.stream.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("jslog: size: %w", err)
	}
	return info.State.Msgs, info.State.Bytes, nil
}

// Changed returns a channel closed after the next append by any writer.
func (l *Log) Changed() <-chan struct{} {
	return l.watch.changed()
}

// observe records that sequence seq exists.
func (l *Log) observe(seq uint64) {
	l.mu.Lock()
	l.last = max(l.last, seq)
	l.mu.Unlock()
}

// validChannel reports whether name is usable as the subject tokens after
// the prefix.
func validChannel(name string) error {
	if name == "" {
		return errors.New("empty channel name")
	}
	for _, tok := range strings.Split(name, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return fmt.Errorf("channel name %q is not a valid subject", name)
		}
	}
	return nil
}

// publishAsync publishes msg without a per-message request round trip and
// waits for its acknowledgement: concurrent appends share one reply
// subscription and are pipelined.
func (l *Log) publishAsync(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	f, err := l.js.PublishMsgAsync(msg, opts...)
	if err != nil {
		return nil, err
	}
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
