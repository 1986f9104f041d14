package live_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/live"
)

// BenchmarkWebSocketFanout appends b.N notifications while 1, 100 and 500
// live clients on channels=* read them, and reports notifications/s
// delivered to all clients and frames/s written in total.
func BenchmarkWebSocketFanout(b *testing.B) {
	for _, clients := range []int{1, 100, 500} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			e := newWSEnv(b, wsEnvOpts{ws: live.Config{SendQueue: 4096}})
			conns := make([]*websocket.Conn, clients)
			for i := range conns {
				c, _, err := e.dial(query("channels", "*"), nil, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, _, err := c.ReadMessage(); err != nil { // live
					b.Fatal(err)
				}
				conns[i] = c
			}
			rec := hubtest.Record("bench", 1)
			b.ResetTimer()
			var last uint64
			var wg sync.WaitGroup
			got := make([]int, clients)
			for i, c := range conns {
				wg.Go(func() {
					_ = c.SetReadDeadline(time.Now().Add(5 * time.Minute))
					for got[i] < b.N {
						if _, _, err := c.ReadMessage(); err != nil {
							b.Error(err)
							return
						}
						got[i]++
					}
				})
			}
			for i := range b.N {
				rec.Key = fmt.Sprintf("bench-%d-%d", clients, i)
				seq, _, err := e.log.Append(e.ctx, rec)
				if err != nil {
					b.Fatal(err)
				}
				last = seq
			}
			wg.Wait()
			b.StopTimer()
			_ = last
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifications/s")
			b.ReportMetric(float64(b.N*clients)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
