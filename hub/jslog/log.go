package jslog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/wire"
)

// Defaults for Config.
const (
	DefaultDuplicateWindow = 10 * time.Minute
	// BoundsCacheTTL is how long Bounds reuses the stream's first sequence
	// before asking the server again.
	BoundsCacheTTL = 200 * time.Millisecond
)

// Config configures the log's stream. Open creates the stream or updates
// an existing one to match.
type Config struct {
	Stream          string        // stream name; default wire.Stream
	SubjectPrefix   string        // records go to <prefix>.<channel>; default wire.SubjectPrefix
	Replicas        int           // default 1 (3 on a cluster)
	MaxAge          time.Duration // 0: unlimited
	MaxBytes        int64         // 0: unlimited
	DuplicateWindow time.Duration // a retried publish with the same Key is stored once; default 10 min
	// Upstream, the JetStream domain of an origin hub's NATS server reached
	// over a leaf node link, makes the log a read-only mirror of the
	// origin's stream of the same name: the same records at the same
	// sequences, with the origin's epoch. Appends fail with ErrMirror.
	Upstream string
	// AwaitOrigin, with Upstream, makes the mirror's first opening wait
	// for the origin's answer: an edge starting again on the origin's new
	// log (its former mirror still held) must not keep serving the former
	// one because its new leaf link is not up yet. Until the origin
	// answers, opening fails (the caller retries).
	AwaitOrigin bool
	Logger      *slog.Logger // reconnection events; default: none
}

// Log is a hub.Log stored in a JetStream stream.
type Log struct {
	cfg  Config
	conn *natsconn.Conn
	own  bool // conn wraps Open's *nats.Conn: closed by Close
	log  *slog.Logger

	rebuild sync.Mutex // one rebuild at a time
	hmu     sync.Mutex
	h       *handles // of the current connection generation

	cmu     sync.Mutex
	changed chan struct{} // closed at the next append

	closeOnce sync.Once
	stop      context.CancelFunc // ends follow (and a mirror's standIn)
	done      chan struct{}
	standDone chan struct{} // closed when standIn returned; nil but for a mirror

	mu        sync.Mutex
	first     uint64    // cached first sequence
	last      uint64    // highest sequence seen by any means
	refreshed time.Time // when first was fetched
	// refreshing is the stream info request of Bounds in flight, nil when
	// none: concurrent callers wait for it instead of each asking.
	refreshing *boundsCall

	quarantine quarantine // messages that never decode, which readers skip

	linkMu sync.Mutex
	heard  time.Time // a mirror's: when Link last found the origin heard from
	// replaced is the epoch of the mirror replaced on opening (Replaced).
	replaced string
	// mirrorOpened is set once the mirror opened (AwaitOrigin waits only
	// for the first opening).
	mirrorOpened bool

	// appended is told each record this process appends (OnAppend).
	appended atomic.Pointer[func(wire.Record)]
}

// boundsCall is one stream info request made for Bounds; err is set
// before done is closed.
type boundsCall struct {
	done chan struct{}
	err  error
}

var _ hub.Log = (*Log)(nil)

// Open creates or updates the stream on nc and starts watching it for
// appends. The log uses nc as it is: see OpenConn for a log that outlives
// a closed connection.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Log, error) {
	c := natsconn.FromConn(nc)
	l, err := OpenConn(ctx, c, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	l.own = true
	return l, nil
}

// OpenConn waits, within ctx, for c to be connected, creates or updates the
// stream and starts watching it for appends. The log follows c's current
// connection from then on: when c replaces it, the log rebuilds its
// JetStream handles and watcher, and while c is disconnected its
// operations fail at once with an error wrapping natsconn.ErrDisconnected.
func OpenConn(ctx context.Context, c *natsconn.Conn, cfg Config) (*Log, error) {
	cfg.Stream = cmp.Or(cfg.Stream, wire.Stream)
	cfg.SubjectPrefix = cmp.Or(cfg.SubjectPrefix, wire.SubjectPrefix)
	cfg.Replicas = max(cfg.Replicas, 1)
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = DefaultDuplicateWindow
	}
	if cfg.MaxAge > 0 && cfg.DuplicateWindow > cfg.MaxAge {
		cfg.DuplicateWindow = cfg.MaxAge // the server refuses a window beyond MaxAge
	}
	l := &Log{cfg: cfg, conn: c, log: cfg.Logger, changed: make(chan struct{}), done: make(chan struct{})}
	l.log = cmp.Or(l.log, slog.New(slog.DiscardHandler))
	if err := c.Wait(ctx); err != nil {
		return nil, fmt.Errorf("jslog: open: %w", err)
	}
	if err := l.do(ctx, func(context.Context, *handles) error { return nil }); err != nil {
		return nil, fmt.Errorf("jslog: open: %w", err)
	}
	fctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	go l.follow(fctx)
	if cfg.Upstream != "" {
		l.standDone = make(chan struct{})
		go l.standIn(fctx, l.standDone)
	}
	return l, nil
}

// Close stops the change watcher. It does not close the connection (a
// *nats.Conn given to Open, or a natsconn.Conn given to OpenConn).
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.stop()
		<-l.done
		if l.standDone != nil {
			<-l.standDone
		}
		l.hmu.Lock()
		if l.h != nil {
			l.h.watch.stop()
		}
		l.hmu.Unlock()
		if l.own {
			l.conn.Close()
		}
	})
	return nil
}

// Subject returns the subject of channel's records; channel "" names
// every channel (wire.Subject).
func (l *Log) Subject(channel string) string {
	return wire.Subject(l.cfg.SubjectPrefix, channel)
}

// Append publishes rec on its channel's subject and waits for the stream's
// acknowledgement. rec.Received is set to now when zero.
func (l *Log) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) {
	return l.publish(ctx, rec)
}

// AppendAfter is Append on the condition that the channel's last record is
// still lastSeq (0: the channel has none). Otherwise nothing is stored and
// the error wraps hub.ErrConflict: another writer appended first. Messages
// that never decode are not records: a channel with only quarantined
// messages after lastSeq has not moved on.
func (l *Log) AppendAfter(ctx context.Context, rec wire.Record, lastSeq uint64) (uint64, bool, error) {
	seq, dup, err := l.publish(ctx, rec, jetstream.WithExpectLastSequencePerSubject(lastSeq))
	if errors.Is(err, hub.ErrConflict) {
		if last, ok := l.quarantinedAfter(ctx, rec.Channel, lastSeq); ok {
			return l.publish(ctx, rec, jetstream.WithExpectLastSequencePerSubject(last))
		}
	}
	return seq, dup, err
}

func (l *Log) publish(ctx context.Context, rec wire.Record, opts ...jetstream.PublishOpt) (uint64, bool, error) {
	if l.cfg.Upstream != "" {
		return 0, false, fmt.Errorf("jslog: append to %s: %w", l.Subject(rec.Channel), ErrMirror)
	}
	if err := validChannel(rec.Channel); err != nil {
		return 0, false, fmt.Errorf("jslog: append: %w", err)
	}
	if err := wire.CheckRecord(rec); err != nil {
		return 0, false, fmt.Errorf("jslog: append to %s: %w", l.Subject(rec.Channel), err)
	}
	if rec.Received.IsZero() {
		rec.Received = time.Now().UTC()
	}
	msg := &nats.Msg{Subject: l.Subject(rec.Channel), Header: EncodeHeaders(rec), Data: rec.Body}
	if rec.Key != "" {
		opts = append(opts, jetstream.WithMsgID(msg.Header.Get(wire.HeaderMsgID)))
	}
	var ack *jetstream.PubAck
	var epoch string
	err := l.do(ctx, func(ctx context.Context, h *handles) (err error) {
		ack, err = publishAsync(ctx, h.js, msg, opts...)
		epoch = h.epoch
		return err
	})
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
			return 0, false, fmt.Errorf("jslog: append to %s: %w: %v", msg.Subject, hub.ErrConflict, err)
		}
		return 0, false, fmt.Errorf("jslog: append to %s: %w", msg.Subject, err)
	}
	l.observe(ack.Sequence)
	if !ack.Duplicate {
		l.tell(msg, ack.Sequence, epoch)
		l.notify()
	}
	return ack.Sequence, ack.Duplicate, nil
}

// OnAppend has f told each record this Log appends, as a reader reads it
// (decoded from the message stored, with its sequence, its epoch and a
// body of its own), once the stream has stored it and before Changed is
// signalled: a cache of the log (logcache.Cache.Offer) takes its own
// process's appends without reading them back. f is called on the
// appending goroutine, in no particular order between concurrent appends,
// and must not block. A duplicate the stream refused is not told.
func (l *Log) OnAppend(f func(wire.Record)) { l.appended.Store(&f) }

// tell hands the record of msg, stored at seq, to the OnAppend function.
func (l *Log) tell(msg *nats.Msg, seq uint64, epoch string) {
	f := l.appended.Load()
	if f == nil {
		return
	}
	rec, err := DecodeMsg(msg.Subject, msg.Header, bytes.Clone(msg.Data), seq)
	if err != nil { // never for a record this log encoded; a reader quarantines it
		return
	}
	rec.Epoch = epoch
	(*f)(rec)
}

// Next returns the first record of channel (any channel when channel is "")
// with a sequence of at least seq, or hub.ErrNotFound.
func (l *Log) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	subj := l.Subject("")
	if channel != "" {
		if err := validChannel(channel); err != nil {
			return wire.Record{}, fmt.Errorf("jslog: next: %w", err)
		}
		subj = l.Subject(channel)
	}
	seq = cmp.Or(seq, 1)
	for {
		var m *jetstream.RawStreamMsg
		var rec wire.Record
		var ok bool
		err := l.do(ctx, func(ctx context.Context, h *handles) (err error) {
			m, err = h.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
			if err == nil {
				rec, ok = l.decode(h, m.Subject, m.Header, m.Data, m.Sequence, false)
			}
			return err
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return wire.Record{}, fmt.Errorf("jslog: next %s from %d: %w", subj, seq, hub.ErrNotFound)
		}
		if err != nil {
			return wire.Record{}, fmt.Errorf("jslog: next %s from %d: %w", subj, seq, err)
		}
		if ok {
			return rec, nil
		}
		seq = m.Sequence + 1 // quarantined: the next one
	}
}

// decode turns the stream's message seq, read on h, into a record of h's
// epoch (without its body when headersOnly). A message that can never be
// decoded is quarantined instead, and ok is false: the reader skips it.
// Only the decoding is judged here: a failed read is the caller's error,
// to retry.
func (l *Log) decode(h *handles, subject string, hdr nats.Header, data []byte, seq uint64, headersOnly bool) (rec wire.Record, ok bool) {
	l.observe(seq)
	body := data
	if headersOnly {
		body = nil
	}
	rec, err := DecodeMsg(subject, hdr, body, seq)
	if err != nil {
		channel, ours := strings.CutPrefix(subject, l.cfg.SubjectPrefix+".")
		if !ours {
			channel = ""
		}
		l.quarantine.add(l.log, channel, hdr, data, seq, err)
		return wire.Record{}, false
	}
	rec.Epoch = h.epoch
	return rec, true
}

// Changed returns a channel closed after the next append by any writer.
func (l *Log) Changed() <-chan struct{} {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	return l.changed
}

// notify closes the Changed channel and replaces it.
func (l *Log) notify() {
	l.cmu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.cmu.Unlock()
}

// observe records that sequence seq exists.
func (l *Log) observe(seq uint64) {
	l.mu.Lock()
	l.last = max(l.last, seq)
	l.mu.Unlock()
}

// MaxChannelLen bounds a channel name in bytes, so its subject stays far
// below the NATS server's 4 KiB control line.
const MaxChannelLen = 1024

// validChannel reports whether name is usable as the subject tokens after
// the prefix: no control characters or spaces, no wildcard or empty
// token, at most MaxChannelLen bytes.
func validChannel(name string) error {
	if name == "" {
		return errors.New("empty channel name")
	}
	if len(name) > MaxChannelLen {
		return fmt.Errorf("channel name of %d bytes; the limit is %d bytes", len(name), MaxChannelLen)
	}
	for i := range len(name) {
		if name[i] <= ' ' || name[i] == 0x7f {
			return fmt.Errorf("channel name %q is not a valid subject", name)
		}
	}
	for tok := range strings.SplitSeq(name, ".") {
		if tok == "" || tok == "*" || tok == ">" {
			return fmt.Errorf("channel name %q is not a valid subject", name)
		}
	}
	return nil
}

// publishAsync publishes msg without a per-message request round trip and
// waits for its acknowledgement: concurrent appends share one reply
// subscription and are pipelined.
func publishAsync(ctx context.Context, js jetstream.JetStream, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	f, err := js.PublishMsgAsync(msg, opts...)
	if err != nil {
		return nil, err
	}
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
