package jslog

// The stream's bounds and size, asked of the server and shared: a thousand
// queues starting at once make one request, not a thousand.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bounds returns the first and last sequence the stream holds, (0, 0) when
// nothing was ever appended. When retention removed every record, first
// is last+1. The first sequence may be up to BoundsCacheTTL old; the last
// includes every append this process saw.
func (l *Log) Bounds(ctx context.Context) (uint64, uint64, error) {
	for {
		l.mu.Lock()
		// a cached empty log that has had appends since is stale: its
		// first sequence is not 0 any more
		if !l.refreshed.IsZero() && time.Since(l.refreshed) < BoundsCacheTTL && (l.first > 0 || l.last == 0) {
			first, last := l.first, l.last
			l.mu.Unlock()
			return first, last, nil
		}
		if call := l.refreshing; call != nil {
			// another caller is asking the server: share its answer (a
			// thousand queues starting at once make one request, not a
			// thousand)
			l.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return 0, 0, fmt.Errorf("jslog: bounds: %w", ctx.Err())
			}
			if call.err != nil && !initiatorEnded(call.err) {
				return 0, 0, call.err
			}
			continue // answered, or the asker's own context ended first: ask again under this one
		}
		call := &boundsCall{done: make(chan struct{})}
		l.refreshing = call
		l.mu.Unlock()
		info, err := l.infoOrAgain(ctx)
		l.mu.Lock()
		l.refreshing = nil
		if err != nil {
			call.err = fmt.Errorf("jslog: bounds: %w", err)
			close(call.done)
			l.mu.Unlock()
			return 0, 0, call.err
		}
		l.first = info.State.FirstSeq
		l.last = max(l.last, info.State.LastSeq)
		l.refreshed = time.Now()
		first, last := l.first, l.last
		close(call.done)
		l.mu.Unlock()
		if last == 0 {
			return 0, 0, nil
		}
		return first, last, nil
	}
}

// initiatorEnded reports whether err, a shared Bounds request's error, is
// the end of the context of the caller that made it (a probe's short
// bound, a reader that went away), which is no answer for the callers
// that waited on it.
func initiatorEnded(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// staleInfoAfter is how long a stream info request of Bounds may go
// unanswered before an append the log took meanwhile makes Bounds ask
// again (infoOrAgain).
const staleInfoAfter = time.Second

// infoOrAgain is info, asked again when the request has gone unanswered
// for staleInfoAfter and the log has taken an append since it was made: a
// request made while the stream had no leader (a NATS node lost) is never
// answered, and waiting out its timeout would hold every reader of the
// bounds (and their readiness) seconds after the log is back. The request
// given up ends by its own timeout.
func (l *Log) infoOrAgain(ctx context.Context) (*jetstream.StreamInfo, error) {
	type result struct {
		info *jetstream.StreamInfo
		err  error
	}
	for {
		changed := l.Changed()
		res := make(chan result, 1)
		go func() {
			info, err := l.info(ctx)
			res <- result{info, err}
		}()
		t := time.NewTimer(staleInfoAfter)
		select {
		case r := <-res:
			t.Stop()
			return r.info, r.err
		case <-t.C:
		}
		select {
		case r := <-res:
			return r.info, r.err
		case <-changed: // the log answers appends: ask again
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Size returns how many records and bytes the stream holds.
func (l *Log) Size(ctx context.Context) (msgs, bytes uint64, err error) {
	info, err := l.info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("jslog: size: %w", err)
	}
	return info.State.Msgs, info.State.Bytes, nil
}

func (l *Log) info(ctx context.Context) (info *jetstream.StreamInfo, err error) {
	err = l.do(ctx, func(ctx context.Context, h *handles) (err error) {
		info, err = h.stream.Info(ctx)
		return err
	})
	return info, err
}
