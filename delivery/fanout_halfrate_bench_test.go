package delivery

import (
	"fmt"
	"testing"
)

// BenchmarkWebhooks_FanOutHalfRate is the served fan-out to 1,000
// subscriptions on one callback host and on 4, beside plain senders of 16
// and 32 workers (the fastest of rshub-bench's sweep on 2 cores), each at
// half the rate it keeps up with (fanOut.half), so that every host and the
// cap over all hosts go quiet between notifications, as in rshub-bench's
// half-rate phase. Besides the rate and CPU it reports the median and 99th
// percentile of every receipt after its notification's append, the first
// receipt and the spread of a notification's receipts.
func BenchmarkWebhooks_FanOutHalfRate(b *testing.B) {
	for _, hosts := range []int{1, 4} {
		name := fmt.Sprintf("%dhosts", hosts)
		b.Run(name+"/served", func(b *testing.B) {
			benchFanOut(b, fanOut{subs: 1000, hosts: hosts, served: true, paced: true, half: true})
		})
		for _, workers := range []int{16, 32} {
			b.Run(fmt.Sprintf("%s/sender-%d", name, workers), func(b *testing.B) {
				benchFanOut(b, fanOut{subs: 1000, hosts: hosts, paced: true, sender: true, workers: workers, half: true})
			})
		}
	}
}
