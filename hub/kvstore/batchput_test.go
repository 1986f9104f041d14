package kvstore_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// BenchmarkStore_Cursors stores 1,000 cursors per op, as delivery's cursor
// flush does each second for 1,000 subscriptions: one PutCursor each, 8
// at a time (the flush without PutCursors), or one PutCursors. It reports
// the process's CPU time per cursor (the embedded server's included).
func BenchmarkStore_Cursors(b *testing.B) {
	_, nc := testenv.NATS(b)
	ctx := context.Background()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	batch := map[string]hub.Cursor{}
	for i := range n {
		batch[hub.SubscriptionID("https://example.org/t", fmt.Sprintf("https://cb.example/%d", i))] = hub.Cursor{Seq: 1, Until: time.Now()}
	}
	run := func(b *testing.B, round func()) {
		b.ResetTimer()
		cpu0 := cpuTime(b)
		for b.Loop() {
			round()
		}
		b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1000/float64(b.N*n), "cpu-µs/cursor")
	}
	b.Run("PutCursor-8", func(b *testing.B) {
		run(b, func() {
			next := make(chan string)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for id := range next {
						if err := s.PutCursor(ctx, id, batch[id]); err != nil {
							b.Error(err)
						}
					}
				})
			}
			for id := range batch {
				next <- id
			}
			close(next)
			wg.Wait()
		})
	})
	b.Run("PutCursors", func(b *testing.B) {
		run(b, func() {
			if failed := s.PutCursors(ctx, batch); len(failed) > 0 {
				b.Fatal(len(failed))
			}
		})
	})
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
