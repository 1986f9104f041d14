package kvstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// TestPutSubscription_ShardVersionMovesAfterTheWrite watches the KV
// writes of a subscription put as the server takes them: the shard's
// version must move after the subscription is stored, or a hub that reads
// the new version and lists the shard in between misses the subscription
// until the shard changes again.
func TestPutSubscription_ShardVersionMovesAfterTheWrite(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "o"})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := nc.SubscribeSync("$KV.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, cb := range []string{"http://127.0.0.1:9/a", "http://127.0.0.1:9/b"} {
		sub := hub.Subscription{ID: hub.SubscriptionID("https://t.example/", cb), Topic: "https://t.example/", Callback: cb, State: hub.SubActive}
		if i == 1 {
			sub.Lease = 60 // the second put rewrites the first's
			sub.ID = hub.SubscriptionID("https://t.example/", "http://127.0.0.1:9/a")
		}
		if err := st.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		var order []string
		for len(order) < 2 {
			m, err := watch.NextMsg(10 * time.Second)
			if err != nil {
				t.Fatalf("put %d: writes seen %v: %v", i, order, err)
			}
			bucket, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, "$KV.o_"), ".")
			if (bucket == "subs" || bucket == "shardver") && (len(order) == 0 || order[0] != bucket) {
				order = append(order, bucket)
			}
		}
		if order[0] != "subs" {
			t.Fatalf("put %d: writes in the order %v, want the subscription before the shard's version", i, order)
		}
	}
}
