package delivery

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/faultlog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// TestWebhooks_LogAndStoreOutageUnderLoadLosesNothing cuts the engine off
// from both the log and the store while notifications keep being appended
// (by another hub, through the real log) and delivered, long enough for
// every queue to lose its claim; then restores them. Every notification
// reaches every callback in log order, none twice beyond the one in flight,
// Run never returns, each failing operation is logged once per outage
// rather than per attempt, and Health reports the stall and the recovery.
func TestWebhooks_LogAndStoreOutageUnderLoadLosesNothing(t *testing.T) {
	e := newEnv(t)
	topic := "http://127.0.0.1:1/topic"
	e.channel(topic, "news")
	recvs := []*receiver{
		newReceiver(t, nil),
		newReceiver(t, func(int, delivery) int { time.Sleep(3 * time.Millisecond); return 200 }), // slow: POSTs in flight
		newReceiver(t, nil),
	}
	var ids []string
	for i, r := range recvs {
		ids = append(ids, e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	o := &outage{}
	logs := &logBuffer{}
	cfg := e.fastConfig()
	cfg.ClaimTTL = 3 * time.Second // claims time out after 500 ms: a loaded machine must not make them flap
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	w := NewWebhooks(o.Log(e.log), &flakyStore{s: e.store, o: o}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	// The load: appends every few milliseconds until 40 more after the
	// outage ended.
	var pubMu sync.Mutex
	var seqs []uint64
	published := func() int { pubMu.Lock(); defer pubMu.Unlock(); return len(seqs) }
	var after atomic.Int64 // appends once the outage is over; -1 before
	after.Store(-1)
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		for i := 0; after.Load() < 40; i++ {
			s := e.publish(topic, "news", i, 1)
			pubMu.Lock()
			seqs = append(seqs, s...)
			pubMu.Unlock()
			if after.Load() >= 0 {
				after.Add(1)
			}
			time.Sleep(5 * time.Millisecond) // pacing the load, not synchronisation
		}
	}()
	testenv.Eventually(t, wait, func() bool {
		for _, r := range recvs {
			if r.count() < 20 {
				return false
			}
		}
		return true
	}, "deliveries under way")

	o.Set(true)
	testenv.Eventually(t, wait, func() bool {
		ok, since, err := w.Health()
		return !ok && !since.IsZero() && err != nil && len(w.Shards()) == 0
	}, "unhealthy, and every shard given up before its lease could pass to another hub")
	if !strings.Contains(logs.String(), "shard lease not renewed") {
		t.Error("no shard was logged as given up")
	}
	for _, id := range ids {
		if st, ok := statsOf(w, id); ok && st.State != StateStalled {
			t.Errorf("during the outage %s is %q (%q), want stopped or %q", id, st.State, st.Stalled, StateStalled)
		}
	}
	midway := published()
	select {
	case err := <-ran:
		t.Fatalf("Run returned during the outage: %v", err)
	default:
	}
	o.Set(false)
	after.Store(0)

	<-pubDone
	if published() <= midway {
		t.Fatal("nothing appended after the outage began")
	}
	last := seqs[len(seqs)-1]
	testenv.Eventually(t, wait, func() bool {
		for _, r := range recvs {
			got := r.all()
			if len(got) == 0 || got[len(got)-1].Header.Get(wire.HeaderSeq) != strconv.FormatUint(last, 10) {
				return false
			}
		}
		return true
	}, "every callback has the last notification")
	for i, r := range recvs {
		var got []uint64
		for _, d := range r.all() {
			n, _ := strconv.ParseUint(d.Header.Get(wire.HeaderSeq), 10, 64)
			got = append(got, n)
		}
		checkInOrderOnce(t, "callback "+strconv.Itoa(i), got, seqs, 1)
	}
	testenv.Eventually(t, wait, func() bool { ok, _, _ := w.Health(); return ok }, "healthy again")
	for _, id := range ids {
		testenv.Eventually(t, wait, func() bool { return e.cursor(id).Seq == last }, "cursor of %s stored", id)
	}
	t.Logf("outage refused %d calls", o.Refused())
	// Failures of the outage's, not the store's answers a loaded machine
	// makes late (a claim round past its deadline is a failure of its own).
	lines := strings.Split(logs.String(), "\n")
	for _, op := range []string{opShard, opMembers, opLog, opList} {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, op+" failed") && strings.Contains(l, faultlog.ErrOutage.Error()) {
				n++
			}
		}
		if n > len(ids) {
			t.Errorf("%q failure logged %d times for the outage, want once per queue at most (%d refused calls)", op, n, o.Refused())
		}
	}
}

// checkInOrderOnce checks that got delivers want, in order, with at most
// dups receipts repeated: the one in flight received again, or a replay
// from an older stored cursor (cursor.go: a hub that loses its lease
// redelivers since its last stored cursor). Every new receipt is the next
// of want: none lost, none out of order.
func checkInOrderOnce(t *testing.T, who string, got, want []uint64, dups int) {
	t.Helper()
	n, next := 0, 0 // repeats; index in want of the next new receipt
	for _, s := range got {
		switch {
		case next < len(want) && s == want[next]:
			next++
		case next > 0 && s <= want[next-1]:
			n++
		default:
			t.Fatalf("%s: received seq %d where %d was due (out of order or missing): %v", who, s, want[min(next, len(want)-1)], got)
		}
	}
	if n > dups {
		t.Errorf("%s: %d notifications received again, want at most %d", who, n, dups)
	}
	if next != len(want) {
		t.Fatalf("%s: %d of %d notifications received", who, next, len(want))
	}
}
