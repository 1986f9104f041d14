package kvstore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// oldEnc is the key encoding of the layout before issue 11.
func oldEnc(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// oldLayout writes buckets the way kvstore wrote them before keys became
// digests.
type oldLayout struct {
	t   *testing.T
	ctx context.Context
	kv  map[string]jetstream.KeyValue
}

func newOldLayout(t *testing.T, nc *nats.Conn, prefix string) *oldLayout {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	o := &oldLayout{t: t, ctx: ctx, kv: map[string]jetstream.KeyValue{}}
	for _, kind := range []string{"channels", "chstate", "subs", "subtopics", "cursors", "dead", "leases"} {
		kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: prefix + "_" + kind,
			Description: "rshub " + kind, History: 1, Storage: jetstream.FileStorage, Replicas: 1})
		if err != nil {
			t.Fatal(err)
		}
		o.kv[kind] = kv
	}
	return o
}

func (o *oldLayout) put(kind, key string, v any) {
	o.t.Helper()
	var b []byte
	if v != nil {
		var err error
		if b, err = json.Marshal(v); err != nil {
			o.t.Fatal(err)
		}
	}
	if _, err := o.kv[kind].Put(o.ctx, key, b); err != nil {
		o.t.Fatalf("old layout %s %q: %v", kind, key, err)
	}
}

func (o *oldLayout) keys(kind string) []string {
	o.t.Helper()
	l, err := o.kv[kind].ListKeys(o.ctx)
	if err != nil {
		o.t.Fatal(err)
	}
	var out []string
	for k := range l.Keys() {
		out = append(out, k)
	}
	return out
}

// migrationTopics include a 32-byte topic, whose old key has the length
// of a digest.
var migrationTopics = []string{
	"https://example.org/feed/abc.xml", // 32 bytes: old key is 43 characters
	"https://example.org/a.b/changelist.xml?x=1",
	"https://例え.jp/データ.xml",
}

func TestOpen_MigratesTheOldLayout(t *testing.T) {
	_, nc := testenv.NATS(t)
	if len(oldEnc(migrationTopics[0])) != 43 {
		t.Fatal("the first topic must make a digest-length old key")
	}
	old := newOldLayout(t, nc, "m")
	t0 := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	type want struct {
		ch    hub.Channel
		st    hub.ChannelState
		subs  []hub.Subscription
		curs  map[string]hub.Cursor
		deads map[string][]hub.DeadLetter
	}
	wants := map[string]*want{}
	// an ID of digest length and alphabet, as an old store may hold
	oddID := strings.Repeat("A", 43)
	for i, topic := range migrationTopics {
		w := &want{ch: hub.Channel{Topic: topic, Name: "c" + string(rune('a'+i)), Trust: hub.TrustOpen, Created: t0},
			st:   hub.ChannelState{Topic: topic, LastSeq: uint64(10 + i), Published: uint64(i + 1)},
			curs: map[string]hub.Cursor{}, deads: map[string][]hub.DeadLetter{}}
		old.put("channels", oldEnc(topic), w.ch)
		old.put("chstate", oldEnc(topic), w.st)
		ids := []string{hub.SubscriptionID(topic, "https://cb.example/1"), hub.SubscriptionID(topic, "https://cb.example/2")}
		if i == 0 {
			ids = append(ids, oddID)
		}
		for j, id := range ids {
			sub := hub.Subscription{ID: id, Topic: topic, Callback: "https://cb.example/" + id, State: hub.SubActive, Created: t0}
			old.put("subs", id, sub)
			old.put("subtopics", oldEnc(topic)+"."+id, nil)
			c := hub.Cursor{Seq: uint64(100*i + j), Until: t0}
			old.put("cursors", id, c)
			d := hub.DeadLetter{ID: "dl-" + id[:8], SubID: id, Seq: uint64(j + 1), Reason: "gone", Failed: t0}
			old.put("dead", id+"."+oldEnc(d.ID), d)
			w.subs = append(w.subs, sub)
			w.curs[id] = c
			w.deads[id] = []hub.DeadLetter{d}
		}
		wants[topic] = w
	}
	leaseKey := migrationTopics[0] // 32 bytes too
	old.put("leases", oldEnc(leaseKey), map[string]any{"owner": "hub-a", "expires": time.Now().Add(time.Hour)})
	old.put("channels", "not=base64", hub.Channel{Topic: "foreign"}) // unknown: left alone

	check := func(s *kvstore.Store) {
		t.Helper()
		ctx := context.Background()
		chs, err := s.Channels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(chs) != len(migrationTopics)+1 {
			t.Fatalf("Channels = %d, want %d", len(chs), len(migrationTopics)+1)
		}
		for topic, w := range wants {
			ch, err := s.Channel(ctx, topic)
			if err != nil || ch.Name != w.ch.Name {
				t.Fatalf("Channel(%q) = %+v, %v", topic, ch, err)
			}
			st, err := s.ChannelState(ctx, topic)
			if err != nil || st.LastSeq != w.st.LastSeq || st.Published != w.st.Published {
				t.Fatalf("ChannelState(%q) = %+v, %v", topic, st, err)
			}
			subs, err := s.Subscriptions(ctx, topic)
			if err != nil || len(subs) != len(w.subs) {
				t.Fatalf("Subscriptions(%q) = %d, %v; want %d", topic, len(subs), err, len(w.subs))
			}
			for _, sub := range w.subs {
				got, err := s.Subscription(ctx, sub.ID)
				if err != nil || got.Callback != sub.Callback {
					t.Fatalf("Subscription(%s) = %+v, %v", sub.ID, got, err)
				}
				c, err := s.Cursor(ctx, sub.ID)
				if err != nil || c.Seq != w.curs[sub.ID].Seq {
					t.Fatalf("Cursor(%s) = %+v, %v", sub.ID, c, err)
				}
				dl, err := s.DeadLetters(ctx, sub.ID)
				if err != nil || len(dl) != 1 || dl[0].ID != w.deads[sub.ID][0].ID {
					t.Fatalf("DeadLetters(%s) = %+v, %v", sub.ID, dl, err)
				}
			}
		}
		all, err := s.Subscriptions(ctx, "")
		if err != nil || len(all) != 7 {
			t.Fatalf("Subscriptions(\"\") = %d, %v; want 7", len(all), err)
		}
		if ok, err := s.Claim(ctx, leaseKey, "hub-b", time.Minute); err != nil || ok {
			t.Fatalf("migrated lease given to another owner: %v, %v", ok, err)
		}
		if ok, err := s.Claim(ctx, leaseKey, "hub-a", time.Hour); err != nil || !ok {
			t.Fatalf("migrated lease not renewable by its owner: %v, %v", ok, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "m"})
	if err != nil {
		t.Fatal(err)
	}
	check(s)
	// every key is now a digest (or digest.digest), except the foreign one
	for kind := range old.kv {
		for _, k := range old.keys(kind) {
			if k == "not=base64" {
				continue
			}
			for part := range strings.SplitSeq(k, ".") {
				if len(part) != 43 {
					t.Errorf("bucket %s keeps key %q of the old layout", kind, k)
				}
			}
		}
	}
	// a second Open changes nothing
	counts := map[string]int{}
	for kind := range old.kv {
		counts[kind] = len(old.keys(kind))
	}
	s, err = kvstore.Open(ctx, nc, kvstore.Config{Prefix: "m"})
	if err != nil {
		t.Fatal(err)
	}
	check(s)
	for kind, n := range counts {
		if got := len(old.keys(kind)); got != n {
			t.Errorf("second Open: bucket %s has %d keys, had %d", kind, got, n)
		}
	}
}

func TestOpen_MigrationKeepsNewerEntries(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "n"})
	if err != nil {
		t.Fatal(err)
	}
	topic := migrationTopics[1]
	if err := s.PutChannel(ctx, hub.Channel{Topic: topic, Name: "new"}); err != nil {
		t.Fatal(err)
	}
	old := newOldLayout(t, nc, "n")
	old.put("channels", oldEnc(topic), hub.Channel{Topic: topic, Name: "old"})
	if _, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "n"}); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Channel(ctx, topic)
	if err != nil || ch.Name != "new" {
		t.Fatalf("Channel = %+v, %v; want the entry written by the current layout", ch, err)
	}
	if _, err := old.kv["channels"].Get(ctx, oldEnc(topic)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("old key still there: %v", err)
	}
}

// A start's migration pass reads only the entries stored since the last
// pass checked the bucket (an entry of an unknown layout, warned about at
// each pass that reads it, shows which were read): entries an earlier
// version's hub writes later are still migrated, and a bucket created
// again is read whole.
func TestOpen_MigrationReadsOnlyWhatWasStoredSinceTheLastPass(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs testenv.Buffer
	cfg := kvstore.Config{Prefix: "r", Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	old := newOldLayout(t, nc, "r")
	open := func() (*kvstore.Store, int) {
		t.Helper()
		before := strings.Count(logs.String(), "left alone")
		s, err := kvstore.Open(ctx, nc, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s, strings.Count(logs.String(), "left alone") - before
	}
	old.put("channels", "unknown=1", hub.Channel{Topic: "foreign"})
	if _, warned := open(); warned != 1 {
		t.Fatalf("first pass warned about %d unknown entries, want 1", warned)
	}
	if _, warned := open(); warned != 0 {
		t.Fatalf("second pass read again an entry the first checked (%d warnings)", warned)
	}
	// an earlier version's hub, still running, writes in its layout
	topic := migrationTopics[2]
	sub := hub.Subscription{ID: hub.SubscriptionID(topic, "https://cb.example/late"), Topic: topic,
		Callback: "https://cb.example/late", State: hub.SubActive}
	old.put("subs", sub.ID, sub)
	old.put("channels", "unknown=2", hub.Channel{Topic: "foreign"})
	s, warned := open()
	if warned != 1 {
		t.Fatalf("third pass warned about %d unknown entries, want the new one only", warned)
	}
	if got, err := s.Subscription(ctx, sub.ID); err != nil || got.Callback != sub.Callback {
		t.Fatalf("subscription written in the old layout after a pass: %+v, %v", got, err)
	}
	// the channels bucket deleted and created again: its stream starts over
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteKeyValue(ctx, "r_channels"); err != nil {
		t.Fatal(err)
	}
	old = newOldLayout(t, nc, "r")
	old.put("channels", "unknown=3", hub.Channel{Topic: "foreign"})
	if _, warned := open(); warned != 1 {
		t.Fatalf("pass over a bucket created again warned about %d unknown entries, want 1", warned)
	}
}
