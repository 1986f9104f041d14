package kvstore_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// A store whose attempts bucket kept one revision per key (before a
// batch became a revision of its own) is upgraded at Open: the log
// written the old way is still read, newest first after what follows it,
// and each batch is one more revision of the key, never a rewrite of it.
func TestAttempts_OldSingleRevisionLogUpgraded(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	bucket := "old_attempts"
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1, TTL: hub.AttemptLogTTL, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	sub := hub.SubscriptionID("https://example.org/t", "https://cb.example/")
	at := func(seq uint64) hub.Attempt {
		return hub.Attempt{SubID: sub, Seq: seq, Attempt: 1, Status: 204, Time: time.Unix(int64(seq), 0).UTC()}
	}
	old, err := json.Marshal(map[string]any{"subscription": sub, "attempts": []hub.Attempt{at(2), at(1)}})
	if err != nil {
		t.Fatal(err)
	}
	k := kvstore.KeyOf(sub)
	if _, err := kv.Put(ctx, k, old); err != nil {
		t.Fatal(err)
	}

	s, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "old"})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(3); seq <= 5; seq++ { // three batches of one
		if err := s.AddAttempts(ctx, []hub.Attempt{at(seq)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Attempts(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, a := range got {
		seqs = append(seqs, a.Seq)
	}
	if want := []uint64{5, 4, 3, 2, 1}; !slices.Equal(seqs, want) {
		t.Fatalf("attempts = %v, want %v", seqs, want)
	}
	revs, err := kv.History(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 4 {
		t.Fatalf("the key holds %d revisions after the old log and 3 batches, want 4", len(revs))
	}
}
