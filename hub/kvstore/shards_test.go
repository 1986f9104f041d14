package kvstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// Listing many shards in one pass gives each shard what listing it alone
// gives, in the same order: renewed, deleted and unrelated subscriptions
// included, and nothing for a shard not asked for. A shard out of range is
// refused.
func TestSubscriptionsInShards_AsListedShardByShard(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	var subs []hub.Subscription
	for i := range 300 {
		topic, cb := fmt.Sprintf("https://example.org/t%d", i%7), fmt.Sprintf("https://cb.example/%d", i)
		sub := hub.Subscription{ID: hub.SubscriptionID(topic, cb), Topic: topic, Callback: cb, State: hub.SubActive, Expires: now.Add(time.Hour)}
		if err := s.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	for i, sub := range subs[:20] { // renewed: a later revision; deleted: an index entry gone too
		if i%2 == 0 {
			sub.Expires = now.Add(2 * time.Hour)
			err = s.PutSubscription(ctx, sub)
		} else {
			err = s.DeleteSubscription(ctx, sub.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var asked []int
	for n := range hub.Shards {
		if n%3 != 1 {
			asked = append(asked, n)
		}
	}
	got, err := s.SubscriptionsInShards(ctx, asked)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range asked {
		want, err := s.SubscriptionsInShard(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got[n], want) {
			t.Errorf("shard %d: one pass listed %d subscriptions, shard by shard %d (or they differ)", n, len(got[n]), len(want))
		}
		total += len(got[n])
	}
	if len(got) > len(asked) {
		t.Errorf("listed %d shards, asked %d", len(got), len(asked))
	}
	if total == 0 {
		t.Fatal("no subscription listed")
	}
	if _, err := s.SubscriptionsInShards(ctx, []int{hub.Shards}); err == nil {
		t.Error("shard out of range listed")
	}
}
