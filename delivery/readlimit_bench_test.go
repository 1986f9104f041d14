//go:build unix

package delivery

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// BenchmarkWebhooks_RestartBehind measures a restart where every queue is
// behind the log: n subscriptions over n/10 channels of one record each (4 KiB),
// no cursor stored, callbacks on loopback answering 200, the log read
// straight from JetStream (as queues behind the log cache's ring read
// it). It reports the time from Run until every queue has delivered and
// parked, and the peak heap and goroutines meanwhile, with the log reads
// in flight capped as by default (reads=default), at 64, and not
// (reads=uncapped, as before the cap).
func BenchmarkWebhooks_RestartBehind(b *testing.B) {
	for _, store := range []string{"mem", "kv"} {
		for _, n := range []int{20000, 40000, 100000} {
			for _, reads := range []int{0, 64, 1 << 30} {
				name := fmt.Sprintf("store=%s/subs=%d/reads=%d", store, n, reads)
				switch reads {
				case 0:
					name = fmt.Sprintf("store=%s/subs=%d/reads=default", store, n)
				case 1 << 30:
					name = fmt.Sprintf("store=%s/subs=%d/reads=uncapped", store, n)
				}
				b.Run(name, func(b *testing.B) {
					for range b.N {
						benchRestartBehind(b, n, store, reads)
					}
				})
			}
		}
	}
}

// behindBody is the size of each record's body, about that of a change
// notification of a few dozen entries.
const behindBody = 4 << 10

func benchRestartBehind(b *testing.B, n int, store string, reads int) {
	b.StopTimer()
	e := newEnv(b)
	var delivered atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		delivered.Add(1)
	}))
	b.Cleanup(srv.Close)
	mem := newMemStore()
	var st Store = mem
	if store == "kv" {
		st = e.store
	}
	now := time.Now()
	body := bytes.Repeat([]byte("x"), behindBody)
	subs := make([]hub.Subscription, n)
	for i := range subs {
		ch := fmt.Sprintf("c%05d", i/10)
		topic, cb := "https://"+ch+".example/changes.xml", fmt.Sprintf("%s/%s/%d", srv.URL, ch, i)
		subs[i] = hub.Subscription{
			ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: ch, Callback: cb,
			Lease: 864000, Expires: now.Add(240 * time.Hour), State: hub.SubActive, Created: now, Verified: now, StartSeq: 1,
		}
		mem.put(subs[i])
		if i%10 == 0 {
			rec := wire.Record{Topic: topic, Channel: ch, ContentType: "application/xml", Key: ch, Body: body}
			if _, _, err := e.log.Append(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	if st != Store(mem) {
		seedSubscriptions(b, st.(hub.Store), subs)
	}
	cfg := e.fastConfig()
	cfg.Reconcile, cfg.ClaimTTL, cfg.CursorFlush = time.Hour, time.Hour, time.Hour
	cfg.logReads = reads
	heapAndStacks()
	w := NewWebhooks(e.log, st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	peaks := samplePeaks(ctx)
	done := make(chan error, 1)
	b.StartTimer()
	t0 := time.Now()
	go func() { done <- w.Run(ctx) }()
	testenv.Eventually(b, 10*time.Minute, func() bool {
		p, _ := parkedCount(w)
		return p == n && delivered.Load() >= int64(n)
	}, "every queue delivered and parked")
	took := time.Since(t0)
	b.StopTimer()
	cancel()
	<-done
	p := <-peaks
	b.ReportMetric(took.Seconds(), "caught-up-s")
	b.ReportMetric(float64(p.heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(p.goroutines), "peak-goroutines")
	b.ReportMetric(float64(w.reads.peak.Load()), "peak-reads")
}

// peaks are the most heap bytes and goroutines samplePeaks saw.
type peaks struct{ heap, goroutines uint64 }

// samplePeaks samples the heap and goroutines every 20 ms until ctx ends,
// then sends the peaks.
func samplePeaks(ctx context.Context) <-chan peaks {
	out := make(chan peaks, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"}}
		var p peaks
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			p.heap, p.goroutines = max(p.heap, s[0].Value.Uint64()), max(p.goroutines, s[1].Value.Uint64())
			select {
			case <-ctx.Done():
				out <- p
				return
			case <-t.C:
			}
		}
	}()
	return out
}
