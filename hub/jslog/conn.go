package jslog

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/wire"
)

// Reconnection tuning.
const (
	// rebuildTimeout bounds one attempt of follow to rebuild the handles.
	rebuildTimeout = 10 * time.Second
	// rebuildRetry is the wait before follow tries again after a failure.
	rebuildRetry = time.Second
	// publishAsyncTimeout forgets an acknowledgement that never came (its
	// connection was lost), so pending appends do not pile up.
	publishAsyncTimeout = 30 * time.Second
)

// handles are the JetStream handles of one connection generation.
type handles struct {
	gen    uint64
	epoch  string // the stream's (Log.Epoch)
	js     jetstream.JetStream
	stream jetstream.Stream
	watch  *watcher
}

// do runs fn with the handles of the current connection, rebuilding them
// first when the connection was replaced. It fails at once while
// disconnected (see natsconn.Conn.Do).
func (l *Log) do(ctx context.Context, fn func(context.Context, *handles) error) error {
	return l.conn.Do(ctx, func(ctx context.Context, nc *nats.Conn, gen uint64) error {
		h, err := l.handles(ctx, nc, gen)
		if err != nil {
			return err
		}
		return fn(ctx, h)
	})
}

func (l *Log) current() *handles {
	l.hmu.Lock()
	defer l.hmu.Unlock()
	return l.h
}

func (l *Log) handles(ctx context.Context, nc *nats.Conn, gen uint64) (*handles, error) {
	if h := l.current(); h != nil && h.gen == gen {
		return h, nil
	}
	l.rebuild.Lock()
	defer l.rebuild.Unlock()
	old := l.current()
	if old != nil && old.gen == gen {
		return old, nil
	}
	h, err := l.open(ctx, nc, gen)
	if err != nil {
		return nil, err
	}
	l.hmu.Lock()
	l.h = h
	l.hmu.Unlock()
	if old != nil {
		old.watch.stop()
		l.log.Info("jslog: stream handles rebuilt on a new connection", "generation", gen)
		if old.epoch != h.epoch {
			l.log.Error("jslog: the log's stream was created again (the server lost it): a new log with a new epoch; readers positioned in the old one must start again",
				"old_epoch", old.epoch, "epoch", h.epoch)
		}
		// appends while the watcher was gone were not signalled: wake
		// every waiter to look
		l.notify()
	}
	return h, nil
}

// open creates or updates the stream on nc and starts a watcher on it.
func (l *Log) open(ctx context.Context, nc *nats.Conn, gen uint64) (*handles, error) {
	cfg := l.cfg
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishAsyncTimeout))
	if err != nil {
		return nil, err
	}
	maxBytes := cfg.MaxBytes
	if maxBytes <= 0 {
		maxBytes = -1
	}
	ensure := ensureStream
	if cfg.Upstream != "" {
		ensure = func(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.Stream, string, error) {
			l.linkMu.Lock()
			await := cfg.AwaitOrigin && !l.mirrorOpened
			l.linkMu.Unlock()
			st, epoch, replaced, err := ensureMirror(ctx, nc, js, sc, cfg.Upstream, await)
			if err == nil {
				l.linkMu.Lock()
				l.mirrorOpened = true
				l.linkMu.Unlock()
			}
			if replaced != "" {
				l.log.Error("jslog: the origin's log was created again (its data lost): the mirror of its former log is replaced by one of the new log; what was positioned in the former starts again",
					"former_epoch", replaced, "epoch", epoch)
				l.linkMu.Lock()
				l.replaced = replaced
				l.linkMu.Unlock()
			}
			return st, epoch, err
		}
	}
	st, epoch, err := ensure(ctx, js, jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "rshub notification log",
		Subjects:    []string{wire.Subject(cfg.SubjectPrefix, "")},
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
		return nil, fmt.Errorf("stream %s: %w", cfg.Stream, err)
	}
	w, err := startWatcher(ctx, js, cfg.Stream, wire.Subject(cfg.SubjectPrefix, ""), l.observe, l.notify)
	if err != nil {
		return nil, err
	}
	return &handles{gen: gen, epoch: epoch, js: js, stream: st, watch: w}, nil
}

// follow rebuilds the handles as soon as the connection was replaced, so
// Changed keeps signalling appends by other writers to a log nobody
// calls meanwhile.
func (l *Log) follow(ctx context.Context) {
	defer close(l.done)
	var retry <-chan time.Time
	for {
		changed := l.conn.Changed()
		st := l.conn.Status()
		if h := l.current(); st.Connected && (h == nil || h.gen != st.Generation) {
			retry = nil
			rctx, cancel := context.WithTimeout(ctx, rebuildTimeout)
			err := l.do(rctx, func(context.Context, *handles) error { return nil })
			cancel()
			if err != nil && ctx.Err() == nil {
				l.log.Warn("jslog: rebuilding stream handles failed; retrying", "err", err)
				retry = time.After(rebuildRetry)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-retry:
		}
	}
}
