package delivery

import (
	"context"
	"net/http"
	"testing"

	"github.com/rshub/rshub/internal/testenv"
)

// TestWebhooks_CoalescedDeadLettersOutliveALogOutage: a log read that fails
// while a coalesced run's dead letters are stored is retried like every
// other read of the queue: every record of the run gets its dead letter and
// the cursor moves past the run. (The queue used to stop for good there,
// its failure unreported, until its shard's listing changed.)
func TestWebhooks_CoalescedDeadLettersOutliveALogOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const topic, name = "https://example.org/src", "src"
	e.channel(topic, name)
	src := newRSSource(2, 10)
	var seqs []uint64
	for range 30 {
		seqs = append(seqs, src.publish(e, topic, name, 2))
	}
	o := &outage{}
	r := newReceiver(t, func(n int, _ delivery) int {
		if n == 3 { // the last attempt: the log fails as the run's dead letters are stored
			o.Set(true)
		}
		return http.StatusServiceUnavailable
	})
	sub := e.subscribe(topic, r.url("/cb"), "")
	cfg := e.fastConfig()
	cfg.Schedule.Attempts = 3
	cfg.Coalesce = CoalesceConfig{Threshold: 10}
	w := NewWebhooks(o.Log(e.log), e.store, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })

	testenv.Eventually(t, wait, func() bool { ok, _, _ := w.Health(); return !ok && o.Refused() > 0 }, "the log failing after the last attempt")
	o.Set(false)
	last := seqs[len(seqs)-1]
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == last }, "cursor past the dead-lettered run")
	if n := len(e.deadLetters(sub.ID)); n != len(seqs) {
		t.Fatalf("%d dead letters, want one per record of the run (%d)", n, len(seqs))
	}
	testenv.Eventually(t, wait, func() bool { ok, _, _ := w.Health(); return ok }, "delivery healthy again")
}
