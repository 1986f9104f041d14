package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/testenv"
)

// An attempt of retryUntil without an attempt bound may take until the
// deadline, retried or not: the store's upgrade pass, which reads the whole
// store, was cut at 1, 2 then 4 s and started over at every attempt, so a
// start grew super-linearly with the subscriptions (and would never end
// once the pass outgrew 4 s).
func TestRetryUntil_UnboundedAttemptsRunUntilTheDeadline(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	var bounds []time.Time
	err := retryUntil(context.Background(), deadline, 0, slog.New(slog.DiscardHandler), "test", func(ctx context.Context) error {
		d, ok := ctx.Deadline()
		if !ok {
			t.Fatal("an attempt without a deadline")
		}
		bounds = append(bounds, d)
		if len(bounds) < 2 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bounds) != 2 {
		t.Fatalf("attempts: %d, want 2", len(bounds))
	}
	for i, d := range bounds {
		if !d.Equal(deadline) {
			t.Errorf("attempt %d bounded at %s, want the deadline %s", i+1, d.Format(time.StampMilli), deadline.Format(time.StampMilli))
		}
	}
}

// untilReady still gives its attempts short bounds, doubling up to the
// last: a request dropped during a JetStream election is not waited for.
func TestUntilReady_AttemptsAreShortThenDouble(t *testing.T) {
	var got []time.Duration
	err := untilReady(context.Background(), time.Minute, slog.New(slog.DiscardHandler), "test", func(ctx context.Context) error {
		d, _ := ctx.Deadline()
		got = append(got, time.Until(d))
		if len(got) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{firstAttemptTimeout, 2 * firstAttemptTimeout, lastAttemptTimeout}
	for i, w := range want {
		if got[i] > w || got[i] < w-200*time.Millisecond {
			t.Errorf("attempt %d bounded to %s, want about %s", i+1, got[i], w)
		}
	}
}

// openStore opens the KV store and upgrades it: a subscription stored in
// the layout before issue 11 (keyed by its raw ID) is found by its ID.
func TestOpenStore_UpgradesAnEarlierLayout(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "rshub_subs",
		Description: "rshub subs", History: 1, Storage: jetstream.FileStorage, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	sub := hub.Subscription{ID: "old-sub", Topic: "http://example.org/t", Callback: "http://example.org/cb", State: hub.SubActive}
	val, err := json.Marshal(sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := subs.Put(ctx, sub.ID, val); err != nil {
		t.Fatal(err)
	}
	p := &process{cfg: Config{StartupTimeout: 20 * time.Second, NATSReplicas: 1}, logger: slog.New(slog.DiscardHandler), nc: natsconn.FromConn(nc)}
	if err := p.openStore(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := p.store.Subscription(ctx, sub.ID)
	if err != nil {
		t.Fatalf("subscription of the earlier layout after openStore: %v", err)
	}
	if got.Callback != sub.Callback {
		t.Errorf("callback %q, want %q", got.Callback, sub.Callback)
	}
}
