package delivery

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// Failing, StateCounts and Health answer from the troubled queues; they
// must agree with a walk of every queue (Stats) as queues fail and heal.
func TestWebhooks_FailingIndexAgreesWithEveryQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	var down atomic.Bool
	down.Store(true)
	flaky := newReceiver(t, func(int, delivery) int {
		if down.Load() {
			return 503
		}
		return 200
	})
	healthy := newReceiver(t, nil)
	var bad []string
	for i := range 3 {
		bad = append(bad, e.subscribe(topic, flaky.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	for i := range 5 {
		e.subscribe(topic, healthy.url("/cb/"+strconv.Itoa(i)), "")
	}
	seqs := e.publish(topic, "feed", 0, 2)
	cfg := e.fastConfig()
	cfg.Schedule = Schedule{Initial: 5 * time.Millisecond, Multiplier: 1}
	w, _ := e.start(cfg)

	walk := func() (failing []string, counts map[string]int) {
		counts = map[string]int{}
		for _, s := range w.Stats() {
			counts[s.State]++
			if s.State == StateFailing || s.State == StateCircuitOpen || s.State == StateStalled || s.DeadLetters > 0 {
				failing = append(failing, s.ID)
			}
		}
		return failing, counts
	}
	agree := func() bool {
		want, wantCounts := walk()
		got := w.Failing()
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i].ID != want[i] {
				return false
			}
		}
		counts, _ := w.StateCounts()
		if len(counts) != len(wantCounts) {
			return false
		}
		for st, n := range wantCounts {
			if counts[st] != n {
				return false
			}
		}
		return true
	}
	testenv.Eventually(t, wait, func() bool {
		counts, _ := w.StateCounts()
		return len(w.Failing()) == len(bad) && counts[StateActive] == 5 && agree()
	}, "the failing queues indexed, the others active")
	for _, id := range bad {
		if s, ok := w.Stat(id); !ok || s.State != StateFailing {
			t.Errorf("Stat(%s) = %+v, %v; want failing", id, s, ok)
		}
	}
	if counts, _ := w.StateCounts(); counts[StateFailing] != len(bad) || counts[StateActive] != 5 {
		t.Errorf("StateCounts = %v, want %d failing and 5 active", counts, len(bad))
	}
	if ok, _, _ := w.Health(); !ok {
		t.Error("failing callbacks made the engine unhealthy; only its store and log should")
	}

	down.Store(false)
	testenv.Eventually(t, wait, func() bool {
		for _, id := range bad {
			if e.cursor(id).Seq != seqs[1] {
				return false
			}
		}
		return len(w.Failing()) == 0 && agree()
	}, "healed queues leave the index")

	// A queue that stops leaves the counts.
	if err := e.store.DeleteSubscription(context.Background(), bad[0]); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() bool {
		counts, _ := w.StateCounts()
		return counts[StateActive] == 7 && agree()
	}, "a deleted subscription's queue leaves the counts")
}

// StatsPage pages through the queues by ID: every page in order, each
// queue once, the last page saying no more follow.
func TestWebhooks_StatsPageWalksEveryQueueOnceInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	rx := newReceiver(t, nil)
	for i := range 11 {
		e.subscribe(topic, rx.url("/cb/"+strconv.Itoa(i)), "")
	}
	w, _ := e.start(e.fastConfig())
	testenv.Eventually(t, wait, func() bool { return len(w.Stats()) == 11 }, "11 queues running")
	all := w.Stats()
	for _, limit := range []int{1, 3, 11, 50} {
		var got []string
		after, pages := "", 0
		for {
			page, more := w.StatsPage(after, limit)
			pages++
			if len(page) > limit || (more && len(page) != limit) {
				t.Fatalf("limit %d: a page of %d, more %v", limit, len(page), more)
			}
			for _, s := range page {
				got = append(got, s.ID)
			}
			if !more {
				break
			}
			after = page[len(page)-1].ID
		}
		if len(got) != len(all) {
			t.Fatalf("limit %d: %d queues over %d pages, want %d", limit, len(got), pages, len(all))
		}
		for i := range got {
			if got[i] != all[i].ID {
				t.Fatalf("limit %d: item %d is %s, want %s (ordered by ID)", limit, i, got[i], all[i].ID)
			}
		}
	}
	if page, more := w.StatsPage(all[len(all)-1].ID, 5); len(page) != 0 || more {
		t.Fatalf("after the last ID: %d items, more %v", len(page), more)
	}
}
