//go:build unix

package delivery

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/testenv"
)

// BenchmarkWebhooks_Restart measures what a hub restarting with n stored
// subscriptions over n/10 idle channels costs: the time from Run until
// every queue is parked, caught up, per subscription, and the heap and
// stack bytes per parked queue after a collection. Start time per
// subscription that grows with n shows as a larger figure at 2n.
//
// With the memory store the figures are the engine's alone; with the
// JetStream KV store (store=kv) they include the store's requests, which
// is where queues starting all at once used to pile up; store=redis runs
// them against a real redis-server.
func BenchmarkWebhooks_Restart(b *testing.B) {
	for _, store := range []string{"mem", "kv", "redis"} {
		for _, n := range []int{20000, 40000} {
			b.Run(fmt.Sprintf("store=%s/subs=%d", store, n), func(b *testing.B) {
				for range b.N {
					benchRestart(b, n, store)
				}
			})
		}
	}
}

func benchRestart(b *testing.B, n int, store string) {
	b.StopTimer()
	e := newEnv(b)
	mem := newMemStore()
	var st Store = mem
	switch store {
	case "kv":
		st = e.store
	case "redis":
		st = openRedisStore(b)
	}
	now := time.Now()
	subs := make([]hub.Subscription, n)
	for i := range subs {
		ch := fmt.Sprintf("c%05d", i/10)
		topic, cb := "https://"+ch+".example/changes.xml", fmt.Sprintf("http://127.0.0.1:1/%s/%d", ch, i)
		subs[i] = hub.Subscription{
			ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: ch, Callback: cb,
			Lease: 864000, Expires: now.Add(240 * time.Hour), State: hub.SubActive, Created: now, Verified: now, StartSeq: 1,
		}
		mem.put(subs[i])
	}
	if st != Store(mem) {
		seedSubscriptions(b, st.(hub.Store), subs)
	}
	cfg := e.fastConfig()
	cfg.Reconcile, cfg.ClaimTTL, cfg.CursorFlush = time.Hour, time.Hour, time.Hour
	heap0, stacks0 := heapAndStacks()
	w := NewWebhooks(e.log, st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	b.StartTimer()
	t0 := time.Now()
	go func() { done <- w.Run(ctx) }()
	testenv.Eventually(b, 5*time.Minute, func() bool { p, _ := parkedCount(w); return p == n }, "every queue parked")
	took := time.Since(t0)
	b.StopTimer()
	heap1, stacks1 := heapAndStacks()
	if p := os.Getenv("RESTART_HEAP"); p != "" {
		f, _ := os.Create(p)
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
	b.ReportMetric(float64(took.Microseconds())/float64(n), "start-µs/sub")
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/float64(n), "heap-B/sub")
	b.ReportMetric(float64(int64(stacks1)-int64(stacks0))/float64(n), "stack-B/sub")
	cancel()
	<-done
}

// seedSubscriptions stores subs, several at a time.
func seedSubscriptions(b *testing.B, st hub.Store, subs []hub.Subscription) {
	const workers = 32
	errs := make(chan error, workers)
	for k := range workers {
		go func() {
			var err error
			for i := k; i < len(subs) && err == nil; i += workers {
				err = st.PutSubscription(context.Background(), subs[i])
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// openRedisStore opens a Redis store on a redis-server of the test's own.
func openRedisStore(b *testing.B) hub.Store {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := redisstore.Open(ctx, testenv.Redis(b), redisstore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}
