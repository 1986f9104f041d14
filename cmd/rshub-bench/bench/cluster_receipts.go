package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// clusterReceipt is one POST a subscription's callback received: the
// notification id and when, in nanoseconds since the log's epoch.
type clusterReceipt struct {
	id int32
	at int64
}

// clusterStripes is the number of locks the receipt log is striped over.
const clusterStripes = 256

// clusterLog is the cluster scenario's callbacks: loopback servers serving
// /cb/<i> for subscription i (on server i % servers), recording every POST
// in arrival order per subscription.
type clusterLog struct {
	epoch time.Time
	loopbackServers
	bad atomic.Int64 // POSTs without a readable mark or subscription

	mu  [clusterStripes]sync.Mutex
	got atomic.Pointer[[][]clusterReceipt] // by subscription index
}

// startClusterLog listens on n loopback ports.
func startClusterLog(n int) (*clusterLog, error) {
	l := &clusterLog{epoch: time.Now()}
	empty := [][]clusterReceipt{}
	l.got.Store(&empty)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /cb/{i}", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
	})
	mux.HandleFunc("POST /cb/{i}", l.receive)
	var err error
	if l.loopbackServers, err = serveLoopback(n, mux, "cluster callback server"); err != nil {
		return nil, err
	}
	return l, nil
}

// reset forgets every receipt and sizes the log for subs subscriptions.
func (l *clusterLog) reset(subs int) {
	got := make([][]clusterReceipt, subs)
	l.got.Store(&got)
	l.bad.Store(0)
}

// url is subscription i's callback URL.
func (l *clusterLog) url(i int) string {
	return l.on(i, "/cb/"+strconv.Itoa(i))
}

func (l *clusterLog) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	at := time.Since(l.epoch)
	i, ierr := strconv.Atoi(r.PathValue("i"))
	id, _, ok := parseMark(body)
	got := *l.got.Load()
	if err != nil || ierr != nil || !ok || i < 0 || i >= len(got) {
		l.bad.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	m := &l.mu[i%clusterStripes]
	m.Lock()
	got[i] = append(got[i], clusterReceipt{id: int32(id), at: int64(at)})
	m.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// each calls fn with every subscription's receipts in arrival order, under
// its stripe's lock; fn must not keep the slice.
func (l *clusterLog) each(from, to int, fn func(i int, rs []clusterReceipt)) {
	got := *l.got.Load()
	for i := from; i < min(to, len(got)); i++ {
		m := &l.mu[i%clusterStripes]
		m.Lock()
		fn(i, got[i])
		m.Unlock()
	}
}

// has reports whether rs holds id.
func has(rs []clusterReceipt, id int32) bool {
	for k := len(rs) - 1; k >= 0; k-- {
		if rs[k].id == id {
			return true
		}
	}
	return false
}

// waitRound waits until every subscription in [from, to) received the
// notification round names for its channel (subscription i is on channel
// i % len(round); -1: nothing to wait for), polling every 100 ms until
// limit; it returns the number still missing at the deadline.
func (l *clusterLog) waitRound(ctx context.Context, from, to int, round []int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		missing := 0
		l.each(from, to, func(i int, rs []clusterReceipt) {
			if id := round[i%len(round)]; id >= 0 && !has(rs, int32(id)) {
				missing++
			}
		})
		if missing == 0 {
			return 0, nil
		}
		if time.Now().After(deadline) {
			return missing, fmt.Errorf("%d of %d subscriptions lack their notification after %v: %w", missing, to-from, limit, errIncomplete)
		}
		t := time.NewTimer(100 * time.Millisecond) // poll interval with a deadline
		select {
		case <-ctx.Done():
			t.Stop()
			return missing, ctx.Err()
		case <-t.C:
		}
	}
}
