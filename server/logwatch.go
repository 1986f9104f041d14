package server

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/wire"
)

// watchedLog is the notification log as the hub's engines use it (intake,
// the log cache): every append and every read of a record tells readiness
// at once whether the log answered (not Bounds, which may answer from
// memory), so /readyz turns 503 with the first publish the log
// does not take and 200 with the first it takes again, instead of waiting
// for its next probe (health.observe).
type watchedLog struct {
	*jslog.Log
	health *atomic.Pointer[health] // nil until the routes are built
}

// logProbe names the probe of the log, which the log's outcomes update.
const logProbe = "log"

func (l watchedLog) tell(ctx context.Context, err error) {
	h := l.health.Load()
	if h == nil {
		return
	}
	switch logOutcome(ctx, err) {
	case outcomeAnswered:
		h.observe(logProbe, nil)
	case outcomeFailed:
		h.observe(logProbe, err)
	}
}

// Append is jslog.Log.Append, told to readiness.
func (l watchedLog) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) {
	seq, dup, err := l.Log.Append(ctx, rec)
	l.tell(ctx, err)
	return seq, dup, err
}

// AppendAfter is jslog.Log.AppendAfter, told to readiness.
func (l watchedLog) AppendAfter(ctx context.Context, rec wire.Record, lastSeq uint64) (uint64, bool, error) {
	seq, dup, err := l.Log.AppendAfter(ctx, rec, lastSeq)
	l.tell(ctx, err)
	return seq, dup, err
}

// Next is jslog.Log.Next, told to readiness.
func (l watchedLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	rec, err := l.Log.Next(ctx, channel, seq)
	l.tell(ctx, err)
	return rec, err
}

// outcome is what an operation on the log says of the log.
type outcome int

const (
	outcomeNone     outcome = iota // nothing: the caller ended, or the record was refused before any I/O
	outcomeAnswered                // the log answered (a conflict and a record not found are answers)
	outcomeFailed                  // the log did not answer
)

// logOutcome classifies err, the result of an operation on the log under
// ctx.
func logOutcome(ctx context.Context, err error) outcome {
	var apiErr *jetstream.APIError
	switch {
	case err == nil, errors.Is(err, hub.ErrConflict), errors.Is(err, hub.ErrNotFound):
		return outcomeAnswered
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return outcomeNone // the caller went away
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, natsconn.ErrDisconnected),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, jetstream.ErrNoStreamResponse), errors.Is(err, jetstream.ErrJetStreamNotEnabled):
		return outcomeFailed
	case errors.As(err, &apiErr):
		if apiErr.Code >= 500 { // no stream leader, JetStream unavailable
			return outcomeFailed
		}
		return outcomeAnswered
	}
	return outcomeNone
}
