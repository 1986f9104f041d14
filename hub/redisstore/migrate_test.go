package redisstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

func rawClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpen_MigratesTheOldLayout writes keys the way redisstore named them
// before issue 11 (the raw string in the key name), opens the store and
// reads everything back, twice.
func TestOpen_MigratesTheOldLayout(t *testing.T) {
	url := testenv.Redis(t)
	rdb := rawClient(t, url)
	ctx := context.Background()
	const p = "m*" // a prefix with a glob character
	t0 := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	topics := []string{"https://example.org/feed/abc.xml", "https://例え.jp/a b/*?[x]", "urn:x:" + strings.Repeat("y", 5000)}
	for i, topic := range topics {
		ch := hub.Channel{Topic: topic, Name: "c" + string(rune('a'+i)), Trust: hub.TrustOpen, Created: t0}
		rdb.HSet(ctx, p+":channels", topic, mustJSON(t, ch))
		rdb.Set(ctx, p+":chstate:"+topic, mustJSON(t, hub.ChannelState{Topic: topic, LastSeq: uint64(10 + i)}), 0)
		for j := range 2 {
			id := hub.SubscriptionID(topic, "https://cb.example/"+string(rune('0'+j)))
			sub := hub.Subscription{ID: id, Topic: topic, Callback: "https://cb.example/", State: hub.SubActive, Created: t0}
			rdb.HSet(ctx, p+":subs", id, mustJSON(t, sub))
			rdb.SAdd(ctx, p+":subtopic:"+topic, id)
			rdb.HSet(ctx, p+":cursors", id, mustJSON(t, hub.Cursor{Seq: uint64(j + 1), Until: t0}))
			d := hub.DeadLetter{ID: "dl-" + id[:6], SubID: id, Seq: uint64(j + 3), Failed: t0}
			rdb.ZAdd(ctx, p+":dead:"+id, redis.Z{Score: float64(d.Seq), Member: d.ID})
			rdb.HSet(ctx, p+":deadv:"+id, d.ID, mustJSON(t, d))
		}
	}
	rdb.Set(ctx, p+":lease:delivery/"+topics[1], "hub-a", time.Hour)

	check := func() {
		t.Helper()
		s := open(t, url, p)
		for i, topic := range topics {
			ch, err := s.Channel(ctx, topic)
			if err != nil || ch.Name != "c"+string(rune('a'+i)) {
				t.Fatalf("Channel %d = %+v, %v", i, ch, err)
			}
			st, err := s.ChannelState(ctx, topic)
			if err != nil || st.LastSeq != uint64(10+i) {
				t.Fatalf("ChannelState %d = %+v, %v", i, st, err)
			}
			subs, err := s.Subscriptions(ctx, topic)
			if err != nil || len(subs) != 2 {
				t.Fatalf("Subscriptions %d = %d, %v", i, len(subs), err)
			}
			for _, sub := range subs {
				if c, err := s.Cursor(ctx, sub.ID); err != nil || c.Seq == 0 {
					t.Fatalf("Cursor(%s) = %+v, %v", sub.ID, c, err)
				}
				dl, err := s.DeadLetters(ctx, sub.ID)
				if err != nil || len(dl) != 1 || dl[0].SubID != sub.ID {
					t.Fatalf("DeadLetters(%s) = %+v, %v", sub.ID, dl, err)
				}
			}
		}
		if ok, err := s.Claim(ctx, "delivery/"+topics[1], "hub-b", time.Minute); err != nil || ok {
			t.Fatalf("migrated lease given to another owner: %v, %v", ok, err)
		}
		if ok, err := s.Claim(ctx, "delivery/"+topics[1], "hub-a", time.Minute); err != nil || !ok {
			t.Fatalf("migrated lease not renewable by its owner: %v, %v", ok, err)
		}
		for _, old := range []string{"chstate", "subtopic", "lease", "dead", "deadv"} {
			if keys, err := rdb.Keys(ctx, `m\*:`+old+":*").Result(); err != nil || len(keys) != 0 {
				t.Fatalf("old %s keys left: %d, %v", old, len(keys), err)
			}
		}
	}
	check()
	n, err := rdb.DBSize(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	check() // a second Open finds nothing to do
	if m, err := rdb.DBSize(ctx).Result(); err != nil || m != n {
		t.Fatalf("second Open: %d keys, had %d (%v)", m, n, err)
	}
}

// TestOpen_MigrationMergesWithWhatACurrentHubWrote: a key of the old
// layout next to its current one (a current hub wrote meanwhile) is merged
// into it and nothing of either is lost; a current string wins.
func TestOpen_MigrationMergesWithWhatACurrentHubWrote(t *testing.T) {
	url := testenv.Redis(t)
	rdb := rawClient(t, url)
	ctx := context.Background()
	s := open(t, url, "g")
	topic := "https://example.org/t"
	a := hub.Subscription{ID: hub.SubscriptionID(topic, "a"), Topic: topic, Callback: "a"}
	b := hub.Subscription{ID: hub.SubscriptionID(topic, "b"), Topic: topic, Callback: "b"}
	if err := s.PutSubscription(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.AddDeadLetter(ctx, hub.DeadLetter{ID: "new", SubID: a.ID, Seq: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error { st.LastSeq = 9; return nil }); err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, "g:subs", b.ID, mustJSON(t, b))
	rdb.SAdd(ctx, "g:subtopic:"+topic, b.ID)
	rdb.ZAdd(ctx, "g:dead:"+a.ID, redis.Z{Score: 1, Member: "old"})
	rdb.HSet(ctx, "g:deadv:"+a.ID, "old", mustJSON(t, hub.DeadLetter{ID: "old", SubID: a.ID, Seq: 1}))
	rdb.Set(ctx, "g:chstate:"+topic, mustJSON(t, hub.ChannelState{Topic: topic, LastSeq: 3}), 0)

	s = open(t, url, "g")
	subs, err := s.Subscriptions(ctx, topic)
	if err != nil || len(subs) != 2 {
		t.Fatalf("Subscriptions = %+v, %v; want both", subs, err)
	}
	dl, err := s.DeadLetters(ctx, a.ID)
	if err != nil || len(dl) != 2 || dl[0].ID != "old" || dl[1].ID != "new" {
		t.Fatalf("DeadLetters = %+v, %v; want old and new", dl, err)
	}
	st, err := s.ChannelState(ctx, topic)
	if err != nil || st.LastSeq != 9 {
		t.Fatalf("ChannelState = %+v, %v; want the current one", st, err)
	}
}
