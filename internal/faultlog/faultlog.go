// Package faultlog lets tests take a log away and give it back: an Outage
// is a switch shared by the logs (and, in a test's own decorators, stores)
// it wraps; while it is on, every call through them fails as calls to a
// NATS server or Redis that went away do. It is for tests only.
package faultlog

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// ErrOutage is what a wrapped call answers while the outage is on.
var ErrOutage = errors.New("test: connection to the server lost")

// Outage is the switch; its zero value is off.
type Outage struct {
	on      atomic.Bool
	refused atomic.Int64 // calls refused so far
}

// Set turns the outage on or off.
func (o *Outage) Set(on bool) { o.on.Store(on) }

// Refused returns how many calls the outage refused.
func (o *Outage) Refused() int64 { return o.refused.Load() }

// Fail returns ErrOutage, counting the refusal, while the outage is on,
// and nil otherwise: a decorator calls it before each call it wraps.
func (o *Outage) Fail() error {
	if o.on.Load() {
		o.refused.Add(1)
		return ErrOutage
	}
	return nil
}

// Log wraps l: its Append, Next and Bounds fail while the outage is on.
// Changed goes through: a signal lost meanwhile is what the loops'
// polling covers.
func (o *Outage) Log(l hub.Log) hub.Log { return &flakyLog{Log: l, o: o} }

type flakyLog struct {
	hub.Log
	o *Outage
}

func (l *flakyLog) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) {
	if err := l.o.Fail(); err != nil {
		return 0, false, err
	}
	return l.Log.Append(ctx, rec)
}

func (l *flakyLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	if err := l.o.Fail(); err != nil {
		return wire.Record{}, err
	}
	return l.Log.Next(ctx, channel, seq)
}

func (l *flakyLog) Bounds(ctx context.Context) (uint64, uint64, error) {
	if err := l.o.Fail(); err != nil {
		return 0, 0, err
	}
	return l.Log.Bounds(ctx)
}
