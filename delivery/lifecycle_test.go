package delivery

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

func TestWebhooks_LeaseExpiryStopsDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "") // lease of an hour
	first := e.publish(topic, "feed", 0, 1)
	w, _ := e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == first[0] })

	e.clock.Advance(time.Hour + time.Second) // the lease has ended
	e.publish(topic, "feed", 1, 1)           // wakes the queue
	testenv.Eventually(t, wait, func() bool { _, ok := statsOf(w, sub.ID); return !ok }, "queue stopped at lease end")
	if got := r.bodies(); len(got) != 1 {
		t.Fatalf("deliveries after lease end: %v", got)
	}
	if c := e.cursor(sub.ID); c.Seq != first[0] {
		t.Fatalf("cursor moved to %d after lease end", c.Seq)
	}
	// Activate ignores an expired subscription too.
	w.Activate(sub)
	if _, ok := statsOf(w, sub.ID); ok {
		t.Fatal("Activate started an expired subscription")
	}
}

func TestWebhooks_RestartResumesFromStoredCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 30)
	cfg := e.fastConfig()
	_, stop := e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[29] })
	stop()

	seqs = append(seqs, e.publish(topic, "feed", 30, 30)...) // while no engine runs
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[59] })
	got := r.bodies()
	if len(got) != 60 {
		t.Fatalf("got %d deliveries, want 60 (no loss, no repeat after a clean stop)", len(got))
	}
	for i, b := range got {
		if b != fmt.Sprintf("feed-%d", i) {
			t.Fatalf("delivery %d = %q", i, b)
		}
	}
}

func TestWebhooks_StopMidRetryKeepsNotificationPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(int, delivery) int { return 500 })
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 2)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: time.Millisecond, Multiplier: 1} // retries for ever
	_, stop := e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return r.count() >= 3 }, "retrying")
	stop()
	if c := e.cursor(sub.ID); c.Seq != 0 {
		t.Fatalf("cursor moved to %d without a 2xx", c.Seq)
	}
	if dl := e.deadLetters(sub.ID); len(dl) != 0 {
		t.Fatalf("dead letters: %+v", dl)
	}
	r.setRespond(nil)
	n := r.count()
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[1] })
	if got := r.bodies()[n:]; len(got) != 2 || got[0] != "feed-0" || got[1] != "feed-1" {
		t.Fatalf("after restart: %v", got)
	}
}

func TestWebhooks_ActivateStartsWithoutWaitingForReconcile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	cfg := e.fastConfig()
	cfg.Reconcile = time.Hour
	w, _ := e.start(cfg)
	// The first reconcile ran on an empty store; this subscription
	// only reaches the engine through Activate.
	testenv.Eventually(t, wait, func() bool { return len(w.Stats()) == 0 })
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	w.Activate(sub)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })

	// Deactivate stops it: later notifications stay for when it returns.
	w.Deactivate(sub.ID)
	if _, ok := statsOf(w, sub.ID); ok {
		t.Fatal("queue still listed after Deactivate")
	}
	more := e.publish(topic, "feed", 3, 2)
	w.Activate(sub)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == more[1] })
	if got := r.bodies(); len(got) != 5 || got[4] != "feed-4" {
		t.Fatalf("deliveries = %v", got)
	}
}

func TestWebhooks_ActivateBeforeRunIsKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 1)
	cfg := e.fastConfig()
	cfg.Reconcile = time.Hour
	w := NewWebhooks(e.log, e.store, cfg)
	w.Activate(sub)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[0] })
}

func TestWebhooks_ReconcileFollowsTheStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	w, _ := e.start(e.fastConfig()) // reconciles every 50ms
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 1)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[0] }, "picked up by reconcile")

	if err := e.store.DeleteSubscription(context.Background(), sub.ID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() bool { _, ok := statsOf(w, sub.ID); return !ok }, "stopped by reconcile")
}

func TestWebhooks_ShardHeldByAnotherHubWaitsForIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 2)
	ctx := context.Background()
	key := shardKey(hub.ShardOf(sub.ID))
	if ok, err := e.store.Claim(ctx, key, "other-hub", time.Hour); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	cfg := e.fastConfig()
	// Claims are retried every second, each given a second: a busy
	// machine's slow claim does not cost this engine the shards it holds.
	cfg.ClaimTTL = 6 * time.Second
	w, _ := e.start(cfg)
	// The other hub sends no heartbeat, so every shard is this engine's
	// share, but it cannot take the one whose lease is held.
	testenv.Eventually(t, wait, func() bool { return len(w.Shards()) == hub.Shards-1 }, "every free shard held")
	if slices.Contains(w.Shards(), hub.ShardOf(sub.ID)) {
		t.Fatal("engine holds a shard leased to another hub")
	}
	w.Activate(sub)
	if _, ok := statsOf(w, sub.ID); ok {
		t.Fatal("a queue runs for a subscription of a shard another hub holds")
	}
	if n := r.count(); n != 0 {
		t.Fatalf("%d deliveries while another hub holds the subscription's shard", n)
	}
	if err := e.store.Release(ctx, key, "other-hub"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[1] }, "delivered after the shard was released")
	// This engine now holds the shard.
	if ok, _ := e.store.Claim(ctx, key, "other-hub", time.Hour); ok {
		t.Fatal("another owner could take the shard while this engine holds it")
	}
}

func TestWebhooks_StatsReportHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	failing := newReceiver(t, func(int, delivery) int { return 503 })
	healthy := newReceiver(t, nil)
	bad := e.subscribe(topic, failing.url("/cb"), "")
	good := e.subscribe(topic, healthy.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: 5 * time.Millisecond, Multiplier: 1}
	w, _ := e.start(cfg)

	testenv.Eventually(t, wait, func() bool {
		s, _ := statsOf(w, good.ID)
		return s.Cursor.Seq == seqs[2] && s.Backlog == 0
	}, "healthy caught up")
	testenv.Eventually(t, wait, func() bool { s, _ := statsOf(w, bad.ID); return s.ConsecutiveFailures >= 2 })
	s, _ := statsOf(w, bad.ID)
	if s.State != StateFailing || s.LastStatus != 503 || s.LastError == "" || !s.LastSuccess.IsZero() ||
		s.Cursor.Seq != 0 || s.Backlog < 3 || s.Callback != failing.url("/cb") || s.Topic != topic {
		t.Errorf("failing stats = %+v", s)
	}
	g, _ := statsOf(w, good.ID)
	if g.State != StateActive || g.LastStatus != 200 || g.LastSuccess.IsZero() || g.ConsecutiveFailures != 0 ||
		g.HostBreaker != "closed" || !g.Expires.Equal(good.Expires) {
		t.Errorf("healthy stats = %+v", g)
	}
	all := w.Stats()
	if len(all) != 2 || all[0].ID > all[1].ID {
		t.Errorf("Stats not ordered by ID: %+v", all)
	}
}

func TestWebhooks_ReactivateWaitsForTheStoppedQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	entered := make(chan struct{}, 10)
	proceed := make(chan struct{})
	r := newReceiver(t, func(n int, _ delivery) int {
		if n == 1 {
			entered <- struct{}{}
			<-proceed
		}
		return http.StatusOK
	})
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 3)
	cfg := e.fastConfig()
	cfg.Reconcile = time.Hour
	cfg.Grace = wait
	w, _ := e.start(cfg)
	<-entered
	w.Deactivate(sub.ID) // the first POST is in its grace period
	w.Activate(sub)      // the new queue must wait for the old one
	close(proceed)
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == seqs[2] })
	if got := strings.Join(r.bodies(), ","); got != "feed-0,feed-1,feed-2" {
		t.Fatalf("deliveries = %s, want each once in order", got)
	}
}
