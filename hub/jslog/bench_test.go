package jslog_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
)

// BenchmarkAppend measures durable appends (each waits for its PubAck) with
// 1 and 64 concurrent appenders under both sync policies, reporting
// appends/s and p50/p99 latency.
func BenchmarkAppend(b *testing.B) {
	for _, policy := range []embednats.SyncPolicy{embednats.SyncDefault, embednats.SyncAlways} {
		for _, publishers := range []int{1, 64} {
			b.Run(fmt.Sprintf("sync=%s/publishers=%d", policy, publishers), func(b *testing.B) {
				benchAppend(b, policy, publishers)
			})
		}
	}
}

func benchAppend(b *testing.B, policy embednats.SyncPolicy, publishers int) {
	srv, err := embednats.Start(embednats.Config{DataDir: b.TempDir(), Sync: policy})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	l, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	body := make([]byte, 1024) // a typical change notification fragment

	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	op := func() {
		i := int(next.Add(1) - 1)
		rec := record("bench", i)
		rec.Body = body
		start := time.Now()
		if _, _, err := l.Append(ctx, rec); err != nil {
			b.Error(err)
			return
		}
		lat[i] = time.Since(start)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	if publishers == 1 {
		for range b.N {
			op()
		}
	} else {
		b.SetParallelism((publishers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				op()
			}
		})
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
