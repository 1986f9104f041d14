package delivery

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// errOutage is what the decorators of an outage answer while it is on.
var errOutage = errors.New("test: connection to the server lost")

// outage is a switch shared by test decorators of the log and the store:
// while it is on, every call through them fails, as calls to a NATS server
// or Redis that went away do.
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

// Log wraps l: its calls fail while the outage is on.
func (o *outage) Log(l hub.Log) hub.Log { return &flakyLog{Log: l, o: o} }

// flakyLog is a hub.Log whose calls fail while its outage is on. Changed
// goes through: a signal lost meanwhile is what the loops' polling covers.
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

// flakyStore is a Store whose calls fail while its outage is on.
type flakyStore struct {
	s Store
	o *outage
}

var _ Store = (*flakyStore)(nil)

func (f *flakyStore) SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error) {
	if err := f.o.fail(); err != nil {
		return nil, err
	}
	return f.s.SubscriptionsInShard(ctx, shard)
}

func (f *flakyStore) ShardVersions(ctx context.Context) ([]uint64, error) {
	if err := f.o.fail(); err != nil {
		return nil, err
	}
	return f.s.ShardVersions(ctx)
}

func (f *flakyStore) Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	if err := f.o.fail(); err != nil {
		return nil, err
	}
	return f.s.Heartbeat(ctx, owner, ttl)
}

func (f *flakyStore) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	if err := f.o.fail(); err != nil {
		return hub.Subscription{}, err
	}
	return f.s.Subscription(ctx, id)
}

func (f *flakyStore) DeleteSubscription(ctx context.Context, id string) error {
	if err := f.o.fail(); err != nil {
		return err
	}
	return f.s.DeleteSubscription(ctx, id)
}

func (f *flakyStore) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	if err := f.o.fail(); err != nil {
		return hub.Cursor{}, err
	}
	return f.s.Cursor(ctx, subID)
}

func (f *flakyStore) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	if err := f.o.fail(); err != nil {
		return err
	}
	return f.s.PutCursor(ctx, subID, c)
}

func (f *flakyStore) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	if err := f.o.fail(); err != nil {
		return err
	}
	return f.s.AddDeadLetter(ctx, d)
}

func (f *flakyStore) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	if err := f.o.fail(); err != nil {
		return nil, err
	}
	return f.s.DeadLetters(ctx, subID)
}

func (f *flakyStore) DeleteDeadLetter(ctx context.Context, subID, id string) error {
	if err := f.o.fail(); err != nil {
		return err
	}
	return f.s.DeleteDeadLetter(ctx, subID, id)
}

func (f *flakyStore) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if err := f.o.fail(); err != nil {
		return false, err
	}
	return f.s.Claim(ctx, key, owner, ttl)
}

func (f *flakyStore) Release(ctx context.Context, key, owner string) error {
	if err := f.o.fail(); err != nil {
		return err
	}
	return f.s.Release(ctx, key, owner)
}
