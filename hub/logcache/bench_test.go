package logcache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rshub/rshub/hub/logcache"
)

// BenchmarkNext_Hit measures Next answered from a full ring of 8192 records
// over 16 channels, for any channel and for one channel, single and
// parallel.
func BenchmarkNext_Hit(b *testing.B) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	start(b, c)
	ctx := context.Background()
	var last uint64
	for i := range logcache.DefaultMaxRecords {
		seq, _, err := c.Append(ctx, rec(fmt.Sprintf("c%d", i%16), i))
		if err != nil {
			b.Fatal(err)
		}
		last = seq
	}
	waitAbsorbed(b, c, last)
	first := c.Stats().First
	n := last - first + 1
	for _, channel := range []string{"", "c7"} {
		b.Run(fmt.Sprintf("channel=%q", channel), func(b *testing.B) {
			var i uint64
			for b.Loop() {
				if _, err := c.Next(ctx, channel, first+i%n); err != nil && i%n < n-16 {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("channel=%q/parallel", channel), func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				var i uint64
				for pb.Next() {
					_, _ = c.Next(ctx, channel, first+i%n)
					i += 7
				}
			})
		})
	}
	b.Run("caught-up", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Next(ctx, "c7", last+1); err == nil {
				b.Fatal("found a record after the last")
			}
		}
	})
}
