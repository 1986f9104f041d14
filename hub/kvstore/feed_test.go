package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// The feed tells, after a mark, the last write to each subscription
// written since, made through another client of the same buckets: a put
// with its value, a deletion with its shard and key, a subscription
// deleted and made again as a put; nothing for one untouched. Following
// again from the mark it returned tells only what came after.
func TestSubscriptionChanges_TellTheWritesSinceTheMark(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kvstore.Open(ctx, nc, kvstore.Config{}) // another hub's client
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	sub := func(i int, exp time.Duration) hub.Subscription {
		cb := fmt.Sprintf("https://cb.example/%d", i)
		return hub.Subscription{ID: hub.SubscriptionID("https://example.org/t", cb), Topic: "https://example.org/t", Callback: cb, State: hub.SubActive, Expires: now.Add(exp)}
	}
	put := func(st *kvstore.Store, s hub.Subscription) {
		t.Helper()
		if err := st.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	del := func(st *kvstore.Store, id string) {
		t.Helper()
		if err := st.DeleteSubscription(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		put(s, sub(i, time.Hour))
	}
	mark, err := s.SubscriptionMark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	renewed, added, gone, back := sub(1, 2*time.Hour), sub(100, time.Hour), sub(2, 0), sub(3, 3*time.Hour)
	put(other, sub(1, 90*time.Minute))
	put(other, renewed) // only the last write is told
	put(other, added)
	del(other, gone.ID)
	del(other, back.ID)
	put(other, back)

	changes, next, err := s.SubscriptionChanges(ctx, mark, hub.MaxFollowed)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]hub.SubscriptionChange{}
	for _, c := range changes {
		if _, dup := got[c.Key]; dup {
			t.Errorf("key %s told twice", c.Key)
		}
		got[c.Key] = c
	}
	if len(got) != 4 {
		t.Errorf("told %d subscriptions, want 4: %+v", len(got), changes)
	}
	for _, want := range []hub.Subscription{renewed, added, back} {
		c := got[s.SubscriptionKey(want.ID)]
		if c.Deleted || !c.Sub.Expires.Equal(want.Expires) || c.Sub.ID != want.ID || c.Shard != hub.ShardOf(want.ID) {
			t.Errorf("%s: told %+v, want a put of its last write", want.Callback, c)
		}
	}
	if c := got[s.SubscriptionKey(gone.ID)]; !c.Deleted || c.Shard != hub.ShardOf(gone.ID) {
		t.Errorf("deleted subscription told as %+v", c)
	}

	changes, next2, err := s.SubscriptionChanges(ctx, next, hub.MaxFollowed)
	if err != nil || len(changes) != 0 {
		t.Fatalf("at rest: %d changes, %v", len(changes), err)
	}
	del(other, renewed.ID)
	changes, _, err = s.SubscriptionChanges(ctx, next2, hub.MaxFollowed)
	if err != nil || len(changes) != 1 || !changes[0].Deleted || changes[0].Key != s.SubscriptionKey(renewed.ID) {
		t.Fatalf("after one deletion: %+v, %v", changes, err)
	}
}

// A mark the store cannot follow from (not one of its marks, or more
// writes since than the reader follows) is refused with hub.ErrFeedLost,
// so that the reader lists its shards instead.
func TestSubscriptionChanges_LostWhenTheyCannotBeTold(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mark, err := s.SubscriptionMark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cb := fmt.Sprintf("https://cb.example/%d", i)
		if err := s.PutSubscription(ctx, hub.Subscription{ID: hub.SubscriptionID("https://example.org/t", cb), Topic: "https://example.org/t", Callback: cb, State: hub.SubActive}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, mark string
		max        int
	}{
		{"too many", mark, 4},
		{"not a mark", "x", hub.MaxFollowed},
		{"ahead of the streams", "999999.999999", hub.MaxFollowed},
	} {
		if _, _, err := s.SubscriptionChanges(ctx, c.mark, c.max); !errors.Is(err, hub.ErrFeedLost) {
			t.Errorf("%s: %v, want ErrFeedLost", c.name, err)
		}
	}
	if changes, _, err := s.SubscriptionChanges(ctx, mark, 10); err != nil || len(changes) != 5 {
		t.Errorf("within the bound: %d changes, %v", len(changes), err)
	}
}
