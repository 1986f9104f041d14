package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
)

// Many queues behind the log at start: their reads in flight never exceed
// the cap, and every queue still receives its channel's records in order,
// none lost.
func TestWebhooks_CatchUpReadsCapped(t *testing.T) {
	// 1,000 queues. How many reads pile up uncapped depends on how fast
	// the log answers (a few on a quiet machine, thousands at 5,000 queues
	// under load): the test checks that the cap holds and is reached.
	const channels, perChannel, records = 100, 10, 2
	const limit = 4
	e := newEnv(t)
	r := newReceiver(t, nil)
	for c := range channels {
		topic, name := fmt.Sprintf("https://example.com/t%d", c), fmt.Sprintf("c%d", c)
		e.channel(topic, name)
		for s := range perChannel {
			e.subscribe(topic, r.url(fmt.Sprintf("/%s/%d", name, s)), "")
		}
	}
	for c := range channels { // every queue starts behind its channel
		e.publish(fmt.Sprintf("https://example.com/t%d", c), fmt.Sprintf("c%d", c), 0, records)
	}

	cfg := e.fastConfig()
	cfg.logReads = limit
	w, stop := e.start(cfg)
	want := channels * perChannel * records
	testenv.Eventually(t, 4*wait, func() bool { return r.count() >= want }, "%d deliveries", want)
	stop()

	byPath := map[string][]string{}
	for _, d := range r.all() {
		byPath[d.Path] = append(byPath[d.Path], d.Body)
	}
	if len(byPath) != channels*perChannel {
		t.Fatalf("%d callbacks received, want %d (%d requests of %d)", len(byPath), channels*perChannel, r.count(), want)
	}
	for path, got := range byPath {
		name, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		for i := range records {
			// at least once: a record may come again, never out of order
			if i >= len(got) || got[i] != fmt.Sprintf("%s-%d", name, i) {
				t.Fatalf("%s received %q, want %s-0 to %s-%d in order", path, got, name, name, records-1)
			}
		}
	}
	if p := w.reads.peak.Load(); p > limit || p == 0 {
		t.Errorf("peak log reads in flight %d, want 1 to %d", p, limit)
	}
	if w.reads.waited.Load() == 0 {
		t.Errorf("no read waited for a slot: the cap was never reached")
	}
	if n := w.reads.inFlight.Load(); n != 0 {
		t.Errorf("%d reads still in flight after stop", n)
	}
}

// A read waiting for a slot gives up when its context ends.
func TestReadGate_WaitRespectsContext(t *testing.T) {
	e := newEnv(t)
	g := newReadGate(e.log, 1)
	took, err := g.enter(context.Background(), "c", 1)
	if err != nil || !took {
		t.Fatalf("first enter: %v, %v", took, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Next(ctx, "c", 1)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Next waiting for a slot: %v, want context.Canceled", err)
	}
	g.leave(true)
	if _, err := g.Next(context.Background(), "c", 1); err == nil {
		t.Fatal("Next of an empty channel found a record")
	}
	if n := g.inFlight.Load(); n != 0 {
		t.Fatalf("%d reads in flight, want 0", n)
	}
}

// Reads the log cache answers from memory take no slot.
func TestReadGate_MemoryReadsTakeNoSlot(t *testing.T) {
	e := newEnv(t)
	e.channel("https://example.com/t", "c")
	e.publish("https://example.com/t", "c", 0, 3)
	c := logcache.New(e.log, logcache.Config{Preload: 8})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, wait, func() bool { return c.Holds("c", 1) }, "the cache holding the channel")
	g := newReadGate(c, 1)
	g.slots <- struct{}{} // the only slot taken: a read of the log would wait
	rec, err := g.Next(ctx, "c", 1)
	if err != nil || rec.Seq != 1 {
		t.Fatalf("Next from memory: %v, %v", rec.Seq, err)
	}
}
