package delivery

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/internal/testenv"
)

// wakeCounts returns, per subscription id, the dispatcher's wake-ups sent
// to its queue and the waits that ended on one.
func wakeCounts(w *Webhooks, ids []string) (signals, woken []uint64) {
	for _, id := range ids {
		q := w.queueFor(id)
		if q == nil {
			signals, woken = append(signals, 0), append(woken, 0)
			continue
		}
		signals, woken = append(signals, q.signals.Load()), append(woken, q.woken.Load())
	}
	return signals, woken
}

// idle reports whether every queue of ids waits, caught up with the log.
func idle(w *Webhooks, ids []string) bool {
	for _, id := range ids {
		q := w.queueFor(id)
		if q == nil {
			return false
		}
		q.mu.Lock()
		ok := q.idle && q.stats.State == StateActive
		q.mu.Unlock()
		if !ok {
			return false
		}
	}
	return true
}

func TestWebhooks_PublishWakesOnlyTheQueuesOfItsChannel(t *testing.T) {
	t.Parallel()
	const n, m = 5, 7
	const topicA, topicB = "https://a.example/changes.xml", "https://b.example/changes.xml"
	e := newEnv(t)
	e.channel(topicA, "a")
	e.channel(topicB, "b")
	var gotA, gotB atomic.Int64
	ra := newReceiver(t, func(int, delivery) int { gotA.Add(1); return 204 })
	rb := newReceiver(t, func(int, delivery) int { gotB.Add(1); return 204 })
	var idsA, idsB []string
	for i := range n {
		idsA = append(idsA, e.subscribe(topicA, ra.url(fmt.Sprintf("/a%d", i)), "").ID)
	}
	for i := range m {
		idsB = append(idsB, e.subscribe(topicB, rb.url(fmt.Sprintf("/b%d", i)), "").ID)
	}
	w, _ := e.start(e.fastConfig())
	all := append(append([]string{}, idsA...), idsB...)
	testenv.Eventually(t, wait, func() bool { return idle(w, all) }, "every queue caught up")

	sigA0, wokeA0 := wakeCounts(w, idsA)
	sigB0, wokeB0 := wakeCounts(w, idsB)
	seqs := e.publish(topicA, "a", 0, 3)
	testenv.Eventually(t, wait, func() bool { return gotA.Load() == 3*n }, "A's subscribers receive every record")
	for _, id := range idsA {
		testenv.Eventually(t, wait, func() bool { return e.cursor(id).Seq == seqs[2] }, "A's cursors stored")
	}
	testenv.Eventually(t, wait, func() bool { return idle(w, all) }, "every queue idle again")

	sigA, wokeA := wakeCounts(w, idsA)
	sigB, wokeB := wakeCounts(w, idsB)
	for i := range idsA {
		if sigA[i] == sigA0[i] || wokeA[i] == wokeA0[i] {
			t.Errorf("queue a%d: signals %d→%d, wake-ups %d→%d; want at least one each", i, sigA0[i], sigA[i], wokeA0[i], wokeA[i])
		}
	}
	for i := range idsB {
		if sigB[i] != sigB0[i] || wokeB[i] != wokeB0[i] {
			t.Errorf("queue b%d on another channel: signals %d→%d, wake-ups %d→%d; want none", i, sigB0[i], sigB[i], wokeB0[i], wokeB[i])
		}
	}
	if gotB.Load() != 0 {
		t.Errorf("B's subscribers received %d deliveries of A's records", gotB.Load())
	}
}
