package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// BenchmarkWebhooks_FanOut measures the fan-out pattern: subscriptions of
// one channel on one loopback callback host (or 4), all caught up, then b.N
// notifications appended back to back, each delivered to every
// subscription (signed). It reports deliveries/s, the process's CPU time
// per delivery, the first receipt of each notification when paced and,
// with -benchmem, the allocations per notification (divide by subs for
// per delivery). "sender" cases are a plain sender instead of the engine,
// its POSTs unsigned: the ceiling rshub-bench measures the hub against.
// "served" is the engine as the hub runs it: reading through a log cache,
// every attempt taken by an attempt log written to the store; "paced"
// appends each notification once the last one reached every subscription,
// so that every queue parks and is woken again each time, as at a rate
// the hub keeps up with.
func BenchmarkWebhooks_FanOut(b *testing.B) {
	b.Run("perhost=8", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, floor: 8, ceiling: 8}) })
	b.Run("adaptive", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500}) })
	b.Run("served", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, served: true}) })
	b.Run("served-paced", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, served: true, paced: true}) })
	// the callbacks spread over 4 hosts, as rshub-bench's default
	b.Run("served-paced-4hosts", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, hosts: 4, served: true, paced: true}) })
	// the ceiling beside them
	b.Run("sender-paced", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, paced: true, sender: true}) })
	b.Run("sender-paced-4hosts", func(b *testing.B) { benchFanOut(b, fanOut{subs: 500, hosts: 4, paced: true, sender: true}) })
	// what each subscription costs a second (its attempt log and cursor
	// writes) counts once per delivery or so at 10,000
	// a host per callback, as rshub-bench's webhook-each-host, beside the
	// plain sender of 16 workers its sweep finds fastest there
	b.Run("served-paced-1000hosts", func(b *testing.B) { benchFanOut(b, fanOut{subs: 1000, hosts: 1000, served: true, paced: true}) })
	b.Run("sender-paced-1000hosts", func(b *testing.B) {
		benchFanOut(b, fanOut{subs: 1000, hosts: 1000, paced: true, sender: true, workers: 16})
	})
	b.Run("served-paced-10k", func(b *testing.B) { benchFanOut(b, fanOut{subs: 10000, served: true, paced: true}) })
}

// BenchmarkWebhooks_FanOutPerHost is the served fan-out with the per-host
// limit fixed (floor = ceiling) at 4, 16 and 64: on one host back to
// back, and over 4 hosts paced, where the requests in flight over all
// hosts, not per host, set the CPU per delivery and the first receipt.
func BenchmarkWebhooks_FanOutPerHost(b *testing.B) {
	for _, n := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("1host/perhost=%d", n), func(b *testing.B) {
			benchFanOut(b, fanOut{subs: 500, served: true, floor: n, ceiling: n})
		})
		b.Run(fmt.Sprintf("4hosts-paced/perhost=%d", n), func(b *testing.B) {
			benchFanOut(b, fanOut{subs: 500, hosts: 4, served: true, paced: true, floor: n, ceiling: n})
		})
	}
}

// fanOut is a case of BenchmarkWebhooks_FanOut: subs subscriptions over
// hosts callback hosts (0: one), the per-host floor and ceiling (0: the
// defaults), as served or not, paced or not.
type fanOut struct {
	subs, hosts, floor, ceiling int
	served, paced               bool
	// sender replaces the engine with a plain sender, the ceiling of
	// rshub-bench: 64 keep-alive net/http workers per host POSTing each
	// notification to every callback
	sender bool
	// workers, when set, is the plain sender's workers over all hosts
	// instead of 64 per host
	workers int
	// half (paced) waits after each notification reached every
	// subscription as long as that took before the next append: half the
	// rate the engine (or sender) keeps up with, every host going quiet
	// between notifications, as in rshub-bench's half-rate phase
	half bool
}

// benchFanOut runs the case c of BenchmarkWebhooks_FanOut.
func benchFanOut(b *testing.B, c fanOut) {
	subs, paced := c.subs, c.paced
	e := newEnv(b)
	e.channel(topic, "feed")
	var got atomic.Int64
	// paced, when each receipt came: the n-th is of the notification
	// n/subs, as one notification reaches every subscription before the
	// next is appended
	var receipts []atomic.Int64
	if paced {
		receipts = make([]atomic.Int64, b.N*subs)
	}
	reached := make(chan struct{}, b.N) // half: a notification reached every subscription
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := got.Add(1); n <= int64(len(receipts)) {
			receipts[n-1].Store(time.Now().UnixNano())
			if c.half && n%int64(subs) == 0 {
				reached <- struct{}{}
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srvs := make([]*httptest.Server, max(c.hosts, 1))
	for i := range srvs {
		srvs[i] = httptest.NewServer(handler)
		b.Cleanup(srvs[i].Close)
	}
	callbacks := make([]string, subs)
	for i := range callbacks {
		callbacks[i] = fmt.Sprintf("%s/cb/%d", srvs[i%len(srvs)].URL, i)
	}
	body := []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
		`<rs:md capability="change-notification" from="2024-01-01T00:00:00Z" until="2024-01-01T00:00:01Z"/>` +
		`<url><loc>http://example.org/res1</loc><rs:md change="updated"/></url></urlset>`)
	var publish func(ctx context.Context, i int)
	if c.sender {
		publish = plainSender(b, callbacks, len(srvs), c.workers, body)
	} else {
		publish = engineUnderBench(b, e, c, callbacks, body)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime(b)
	appended := make([]time.Time, b.N) // when each append started
	for i := 0; i < b.N; i++ {
		appended[i] = time.Now()
		publish(ctx, i)
		if c.half {
			select {
			case <-reached:
			case <-time.After(time.Minute):
				b.Fatalf("notification %d not delivered to every subscription within a minute", i)
			}
			time.Sleep(time.Since(appended[i])) // the rate, not synchronisation
		} else if paced {
			testenv.Eventually(b, time.Minute, func() bool { return got.Load() >= int64((i+1)*subs) })
		}
	}
	testenv.Eventually(b, 10*time.Minute, func() bool { return got.Load() >= int64(b.N*subs) })
	b.StopTimer()
	b.ReportMetric(float64(b.N*subs)/time.Since(start).Seconds(), "deliveries/s")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N*subs), "cpu-µs/delivery")
	if paced {
		reportReceipts(b, receipts, appended, subs, c.half)
	}
}

// reportReceipts reports the median first receipt of a notification after
// its append and, with all, the median and 99th percentile of every
// receipt after its notification's append and the median spread of a
// notification's receipts (first to last); receipts[n] is when the n-th
// came, of the notification n/subs.
func reportReceipts(b *testing.B, receipts []atomic.Int64, appended []time.Time, subs int, all bool) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	firsts, spreads := make([]time.Duration, len(appended)), make([]time.Duration, len(appended))
	every := make([]time.Duration, 0, len(receipts))
	for i, at := range appended {
		first, last := receipts[i*subs].Load(), receipts[(i+1)*subs-1].Load()
		firsts[i], spreads[i] = time.Duration(first-at.UnixNano()), time.Duration(last-first)
		for n := i * subs; n < (i+1)*subs; n++ {
			every = append(every, time.Duration(receipts[n].Load()-at.UnixNano()))
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(ms(firsts[len(firsts)/2]), "ms-first-receipt")
	if !all {
		return
	}
	slices.Sort(spreads)
	slices.Sort(every)
	b.ReportMetric(ms(every[len(every)/2]), "ms-p50-receipt")
	b.ReportMetric(ms(every[len(every)*99/100]), "ms-p99-receipt")
	b.ReportMetric(ms(spreads[len(spreads)/2]), "ms-spread")
}

// engineUnderBench subscribes the callbacks and starts the engine as c
// says; it returns how to publish the notification i: an append of body.
func engineUnderBench(b *testing.B, e *env, c fanOut, callbacks []string, body []byte) func(context.Context, int) {
	for _, cb := range callbacks {
		e.subscribe(topic, cb, "s3cret")
	}
	cfg := e.fastConfig()
	cfg.Clock = nil
	cfg.PerHostMin, cfg.PerHostMax = c.floor, c.ceiling
	if c.hosts > 64 { // an idle connection for every host, as the hub keeps (server/engines.go)
		cfg.Client = netguard.NewClient(loopbackPolicy(b), netguard.Timeouts{Request: 10 * time.Second, MaxIdleConns: 2048})
	}
	var log hub.Log = e.log
	if c.served {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		b.Cleanup(func() { cancel(); wg.Wait() })
		cache, tries := logcache.New(e.log, logcache.Config{}), hub.NewAttemptLog(e.store, hub.AttemptLogConfig{})
		wg.Go(func() { _ = cache.Run(ctx) })
		wg.Go(func() { _ = tries.Run(ctx) })
		log, cfg.Attempts = cache, tries
		e.log.OnAppend(cache.Offer) // the appends reach the cache as the hub's do (server/engines.go)
	}
	w, _ := e.startOn(log, cfg)
	testenv.Eventually(b, time.Minute, func() bool { c, _ := w.StateCounts(); return c[StateActive] == len(callbacks) })
	return func(ctx context.Context, i int) {
		rec := wire.Record{Topic: topic, Channel: "feed", ContentType: "application/xml", Key: fmt.Sprint(i), Body: body}
		if _, _, err := e.log.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// plainSender starts 64 keep-alive workers per host (workers in all when
// workers > 0), living for the benchmark, and returns how to publish the notification i: body queued
// for a POST to every callback, as rshub-bench's ceiling does.
func plainSender(b *testing.B, callbacks []string, hosts, workers int, body []byte) func(context.Context, int) {
	const perHost = 64
	if workers <= 0 {
		workers = perHost * hosts
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: perHost * hosts, MaxIdleConnsPerHost: perHost,
	}}
	jobs := make(chan string, 4096)
	var wg sync.WaitGroup
	b.Cleanup(func() { close(jobs); wg.Wait(); client.CloseIdleConnections() })
	for range workers {
		wg.Go(func() {
			for cb := range jobs {
				resp, err := client.Post(cb, "application/xml", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
	return func(_ context.Context, _ int) {
		for _, cb := range callbacks {
			jobs <- cb
		}
	}
}
