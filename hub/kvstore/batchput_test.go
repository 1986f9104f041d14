package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// BenchmarkStore_Cursors stores 1,000 cursors per op, as delivery's cursor
// flush does each second for 1,000 subscriptions: one PutCursor each, 8
// at a time (the flush without PutCursors), or one PutCursors. It reports
// the process's CPU time per cursor (the embedded server's included).
func BenchmarkStore_Cursors(b *testing.B) {
	s, ctx := embeddedStore(b), context.Background()
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

// A put the stream refuses (here, over the stream's message size) fails
// alone, with the stream's reason, and the others of its batch are stored;
// with the stream gone, every put fails, at once.
func TestPutCursors_RefusedByTheStreamFailAlone(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	name := "KV_" + kvstore.DefaultPrefix + "_cursors"
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxMsgSize = 300
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	batch := map[string]hub.Cursor{}
	for i := range 400 { // more than awaits an answer at once
		batch[fmt.Sprintf("sub-%d", i)] = hub.Cursor{Seq: uint64(i + 1)}
	}
	big := "sub-" + strings.Repeat("x", 400) // stored with its cursor: over the size
	batch[big] = hub.Cursor{Seq: 7}
	failed := s.PutCursors(ctx, batch)
	if len(failed) != 1 || failed[big] == nil {
		t.Fatalf("failed %d cursors (%v), want only the one over the stream's size", len(failed), first(failed))
	}
	if !strings.Contains(failed[big].Error(), "maximum") {
		t.Fatalf("the refusal does not tell the stream's reason: %v", failed[big])
	}
	for id, want := range batch {
		if id == big {
			continue
		}
		if got, err := s.Cursor(ctx, id); err != nil || got.Seq != want.Seq {
			t.Fatalf("cursor %s = %+v, %v; want seq %d", id, got, err, want.Seq)
		}
	}
	if _, err := s.Cursor(ctx, big); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("the refused cursor reads %v, want not found", err)
	}

	if err := js.DeleteStream(ctx, name); err != nil {
		t.Fatal(err)
	}
	// Puts that waited for acknowledgements that cannot come would still be
	// waiting when this deadline ends.
	goneCtx, cancelGone := context.WithTimeout(ctx, 20*time.Second)
	defer cancelGone()
	if failed := s.PutCursors(goneCtx, map[string]hub.Cursor{"a": {Seq: 1}, "b": {Seq: 2}}); len(failed) != 2 {
		t.Fatalf("with the stream gone, %d of 2 cursors failed: the rest taken for stored", len(failed))
	}
	if goneCtx.Err() != nil {
		t.Fatalf("puts with the stream gone failed only at their deadline (%v)", goneCtx.Err())
	}
}

func first(m map[string]error) error {
	for _, err := range m {
		return err
	}
	return nil
}

// BenchmarkStore_AddAttempts writes the attempt log of 1,000 healthy
// subscriptions per op, as the attempt log's flush does: one put per
// subscription of its records since the last (1, 4, 11 or 22 first
// attempts that delivered). It reports the process's CPU time per put and
// per record (the embedded server's included).
func BenchmarkStore_AddAttempts(b *testing.B) {
	s, ctx := embeddedStore(b), context.Background()
	const subs = 1000
	for _, per := range []int{1, 4, 11, 22} {
		b.Run(fmt.Sprintf("records=%d", per), func(b *testing.B) {
			batch := make([]hub.Attempt, 0, subs*per)
			now := time.Now().UTC()
			for i := range subs {
				id := hub.SubscriptionID("https://example.org/t", fmt.Sprintf("https://cb.example/%d", i))
				for j := range per {
					batch = append(batch, hub.Attempt{SubID: id, Time: now, Seq: uint64(j + 1), Attempt: 1, Status: 204, LatencyMS: 1.234})
				}
			}
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if err := s.AddAttempts(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			cpu := float64((cpuTime(b) - cpu0).Nanoseconds()) / 1000 / float64(b.N)
			b.ReportMetric(cpu/subs, "cpu-µs/put")
			b.ReportMetric(cpu/subs/float64(per), "cpu-µs/record")
		})
	}
}

// embeddedStore is a store on its own embedded NATS server.
func embeddedStore(tb testing.TB) *kvstore.Store {
	tb.Helper()
	_, nc := testenv.NATS(tb)
	s, err := kvstore.Open(context.Background(), nc, kvstore.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
