package live_test

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// errOutage is what a log behind an outage answers while it is on.
var errOutage = errors.New("test: connection to the server lost")

// outage is a switch shared by the logs it wraps: while it is on, every
// Append, Next and Bounds through them fails, as calls to a NATS server
// that went away do. (Package delivery's tests have the same switch over
// the store as well.)
type outage struct {
	on      atomic.Bool
	refused atomic.Int64 // calls refused so far
}

// Set turns the outage on or off.
func (o *outage) Set(on bool) { o.on.Store(on) }

// Refused returns how many calls the outage refused.
func (o *outage) Refused() int64 { return o.refused.Load() }

func (o *outage) fail() error {
	if o.on.Load() {
		o.refused.Add(1)
		return errOutage
	}
	return nil
}

// Log wraps l: its calls fail while the outage is on. Changed goes
// through: a signal lost meanwhile is what the loops' polling covers.
func (o *outage) Log(l hub.Log) hub.Log { return &flakyLog{Log: l, o: o} }

type flakyLog struct {
	hub.Log
	o *outage
}

func (l *flakyLog) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) {
	if err := l.o.fail(); err != nil {
		return 0, false, err
	}
	return l.Log.Append(ctx, rec)
}

func (l *flakyLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	if err := l.o.fail(); err != nil {
		return wire.Record{}, err
	}
	return l.Log.Next(ctx, channel, seq)
}

func (l *flakyLog) Bounds(ctx context.Context) (uint64, uint64, error) {
	if err := l.o.fail(); err != nil {
		return 0, 0, err
	}
	return l.Log.Bounds(ctx)
}
