package delivery

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// benchLocs are the entries of the benchmarks' notifications: ten, half
// of them under the filter's prefix.
func benchLocs(n int) []string {
	locs := make([]string, n)
	for i := range locs {
		dir := "a"
		if i%2 == 1 {
			dir = "b"
		}
		locs[i] = fmt.Sprintf("http://s.example/%s/resource-%d.html", dir, i)
	}
	return locs
}

// BenchmarkWebhooks_DeliverFiltered measures end-to-end delivery of b.N
// ten-entry notifications to one loopback callback, signed with sha256,
// without a filter and with a prefix filter keeping half the entries (a
// parse and an encode per delivery: every notification is new), in the
// same run.
func BenchmarkWebhooks_DeliverFiltered(b *testing.B) {
	for _, bc := range []struct {
		name   string
		filter *changefeed.Filter
	}{
		{"filter=none", nil},
		{"filter=prefix", &changefeed.Filter{Prefixes: []string{"http://s.example/a/"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEnv(b)
			e.channel(topic, "feed")
			var got atomic.Int64
			r := newReceiver(b, func(int, delivery) int { got.Add(1); return 204 })
			sub := e.subscribe(topic, r.url("/cb"), "s3cret")
			if bc.filter != nil {
				sub.Filter = bc.filter
				if err := e.store.PutSubscription(e.ctx(), sub); err != nil {
					b.Fatal(err)
				}
			}
			locs := benchLocs(10)
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				rec := wire.Record{Topic: topic, Channel: "feed", ContentType: "application/xml", Key: fmt.Sprint(i), Body: notificationBody(b, i, locs...)}
				if _, _, err := e.log.Append(ctx, rec); err != nil {
					b.Fatal(err)
				}
			}
			r.mu.Lock()
			r.got = nil // keep memory flat: count only
			r.mu.Unlock()
			cfg := e.fastConfig()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			e.start(cfg)
			testenv.Eventually(b, 10*time.Minute, func() bool { return got.Load() >= int64(b.N) })
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkFilter_PerDelivery measures what a filter adds to one delivery:
// the cache miss (parse, filter, encode) of a notification of 10 and 100
// entries, and the cache hit another subscription with the same filter or
// a retry pays.
func BenchmarkFilter_PerDelivery(b *testing.B) {
	f := &changefeed.Filter{Prefixes: []string{"http://s.example/a/"}}
	for _, n := range []int{10, 100} {
		body := notificationBody(b, 0, benchLocs(n)...)
		b.Run(fmt.Sprintf("entries=%d/miss", n), func(b *testing.B) {
			var c filterCache
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for i := 0; i < b.N; i++ {
				if _, err := c.filteredRecord(wire.Record{Seq: uint64(i + 1), ContentType: "application/xml", Body: body}, f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("entries=%d/hit", n), func(b *testing.B) {
			var c filterCache
			rec := wire.Record{Seq: 1, ContentType: "application/xml", Body: body}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.filteredRecord(rec, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
