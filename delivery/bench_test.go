package delivery

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// BenchmarkWebhooks_DeliverToOneCallback measures end-to-end delivery of
// b.N records already in the log to one loopback callback, signed with
// sha256, from the start of the engine until the last 2xx.
func BenchmarkWebhooks_DeliverToOneCallback(b *testing.B) { benchDeliver(b, nil, "") }

// benchDeliver is BenchmarkWebhooks_DeliverToOneCallback with the engine's
// Config changed by configure (when not nil) and the records carrying
// traceparent.
func benchDeliver(b *testing.B, configure func(*env, *Config), traceparent string) {
	e := newEnv(b)
	e.channel(topic, "feed")
	var got atomic.Int64
	r := newReceiver(b, func(int, delivery) int { got.Add(1); return 204 })
	e.subscribe(topic, r.url("/cb"), "s3cret")
	body := []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
		`<rs:md capability="change-notification" from="2024-01-01T00:00:00Z" until="2024-01-01T00:00:01Z"/>` +
		`<url><loc>http://example.org/res1</loc><rs:md change="updated"/></url></urlset>`)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		rec := wire.Record{Topic: topic, Channel: "feed", ContentType: "application/xml", Key: fmt.Sprint(i), Body: body, TraceParent: traceparent}
		if _, _, err := e.log.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	r.mu.Lock()
	r.got = nil // keep memory flat: count only
	r.mu.Unlock()
	cfg := e.fastConfig()
	if configure != nil {
		configure(e, &cfg)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	e.start(cfg)
	testenv.Eventually(b, 10*time.Minute, func() bool { return got.Load() >= int64(b.N) })
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}
