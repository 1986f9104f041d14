package delivery

import (
	"context"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/faultlog"
)

// outage is the switch the log and store decorators of these tests share
// (package faultlog); flakyStore below is its store side.
type outage = faultlog.Outage

// flakyStore is a Store whose calls fail while its outage is on.
type flakyStore struct {
	s Store
	o *outage
}

var _ Store = (*flakyStore)(nil)

func (f *flakyStore) SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error) {
	if err := f.o.Fail(); err != nil {
		return nil, err
	}
	return f.s.SubscriptionsInShard(ctx, shard)
}

func (f *flakyStore) ShardVersions(ctx context.Context) ([]uint64, error) {
	if err := f.o.Fail(); err != nil {
		return nil, err
	}
	return f.s.ShardVersions(ctx)
}

func (f *flakyStore) Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error) {
	if err := f.o.Fail(); err != nil {
		return nil, err
	}
	return f.s.Heartbeat(ctx, owner, ttl)
}

func (f *flakyStore) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	if err := f.o.Fail(); err != nil {
		return hub.Subscription{}, err
	}
	return f.s.Subscription(ctx, id)
}

func (f *flakyStore) DeleteSubscription(ctx context.Context, id string) error {
	if err := f.o.Fail(); err != nil {
		return err
	}
	return f.s.DeleteSubscription(ctx, id)
}

func (f *flakyStore) Cursor(ctx context.Context, subID string) (hub.Cursor, error) {
	if err := f.o.Fail(); err != nil {
		return hub.Cursor{}, err
	}
	return f.s.Cursor(ctx, subID)
}

func (f *flakyStore) PutCursor(ctx context.Context, subID string, c hub.Cursor) error {
	if err := f.o.Fail(); err != nil {
		return err
	}
	return f.s.PutCursor(ctx, subID, c)
}

func (f *flakyStore) AddDeadLetter(ctx context.Context, d hub.DeadLetter) error {
	if err := f.o.Fail(); err != nil {
		return err
	}
	return f.s.AddDeadLetter(ctx, d)
}

func (f *flakyStore) DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error) {
	if err := f.o.Fail(); err != nil {
		return nil, err
	}
	return f.s.DeadLetters(ctx, subID)
}

func (f *flakyStore) DeleteDeadLetter(ctx context.Context, subID, id string) error {
	if err := f.o.Fail(); err != nil {
		return err
	}
	return f.s.DeleteDeadLetter(ctx, subID, id)
}

func (f *flakyStore) Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if err := f.o.Fail(); err != nil {
		return false, err
	}
	return f.s.Claim(ctx, key, owner, ttl)
}

func (f *flakyStore) Release(ctx context.Context, key, owner string) error {
	if err := f.o.Fail(); err != nil {
		return err
	}
	return f.s.Release(ctx, key, owner)
}
