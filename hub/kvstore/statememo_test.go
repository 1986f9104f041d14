package kvstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// TestChannelState_ReadSparesTheUpdateItsRead: a hub loading a cold
// channel's state and writing it back after a publish reads the state
// once. The update after ChannelState makes no read of its own, for a
// stored state and for a missing one, and one written meanwhile by
// another store sharing the buckets still wins: the update is applied to
// it.
func TestChannelState_ReadSparesTheUpdateItsRead(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func() *kvstore.Store {
		st, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	writer, reader := open(), open()
	var gets atomic.Int64
	watch, err := nc.Subscribe("$JS.API.>", func(m *nats.Msg) {
		if strings.Contains(m.Subject, ".GET.") && strings.Contains(m.Subject, "KV_m_chstate.") {
			gets.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Unsubscribe() }()
	settled := func() int64 { // every request sent so far has reached the watch
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		return gets.Load()
	}
	bump := func(st *kvstore.Store, topic string) hub.ChannelState {
		got, err := st.UpdateChannelState(ctx, topic, func(s *hub.ChannelState) error { s.LastSeq++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	stored, missing := "https://a.example/", "https://b.example/"
	bump(writer, stored)

	if _, err := reader.ChannelState(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.ChannelState(ctx, missing); err == nil {
		t.Fatal("a state nobody wrote was found")
	}
	before := settled()
	if got := bump(reader, stored); got.LastSeq != 2 {
		t.Fatalf("stored state updated to seq %d, want 2", got.LastSeq)
	}
	if got := bump(reader, missing); got.LastSeq != 1 {
		t.Fatalf("missing state created at seq %d, want 1", got.LastSeq)
	}
	if n := settled() - before; n != 0 {
		t.Fatalf("the updates after the reads read the state %d more times, want none", n)
	}

	// Written through another store since the read: the update reads it
	// again and applies to it.
	if _, err := reader.ChannelState(ctx, stored); err != nil {
		t.Fatal(err)
	}
	bump(writer, stored) // 3
	if got := bump(reader, stored); got.LastSeq != 4 {
		t.Fatalf("update after another store's write: seq %d, want 4", got.LastSeq)
	}
}

// BenchmarkChannelState_ColdCycle is what a publish to a cold channel asks
// of the store: its state read (absent for a channel never published to,
// stored otherwise), then written back with a compare-and-set. It reports
// the process's CPU time per cycle (the embedded server's included).
func BenchmarkChannelState_ColdCycle(b *testing.B) {
	s, ctx := embeddedStore(b), context.Background()
	for _, stored := range []bool{false, true} {
		b.Run(map[bool]string{false: "absent", true: "stored"}[stored], func(b *testing.B) {
			n := 0
			cpu0 := cpuTime(b)
			for b.Loop() {
				topic := "https://example.org/cold/" + strconv.Itoa(n%1000)
				if !stored {
					topic += "/" + strconv.Itoa(n)
				}
				n++
				if _, err := s.ChannelState(ctx, topic); err != nil && !errors.Is(err, hub.ErrNotFound) {
					b.Fatal(err)
				}
				if _, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error { st.Published++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1000/float64(b.N), "cpu-µs/cycle")
		})
	}
}

// A compare-and-set stores a value only on the revision it names: an
// absent key on 0, as is a deleted one (a deletion leaves a marker the
// client's Create counts as absent); a key present or moved on is a
// conflict, not an error; with the bucket's stream gone it is an error.
func TestCAS_StoresOnlyOnTheRevisionItNames(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "cas"})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "cas_chstate")
	if err != nil {
		t.Fatal(err)
	}
	cas := func(rev uint64, val string) (uint64, bool) {
		t.Helper()
		got, conflict, err := s.CASState(ctx, "k", rev, []byte(val))
		if err != nil {
			t.Fatalf("CAS on %d: %v", rev, err)
		}
		return got, conflict
	}
	stored := func(want string) {
		t.Helper()
		e, err := kv.Get(ctx, "k")
		if err != nil || string(e.Value()) != want {
			t.Fatalf("the key holds %v, %v; want %q", e, err, want)
		}
	}
	r1, conflict := cas(0, "one")
	if conflict || r1 == 0 {
		t.Fatalf("create of an absent key: revision %d, conflict %v", r1, conflict)
	}
	stored("one")
	if _, conflict := cas(0, "again"); !conflict {
		t.Fatal("a create over a present key was not a conflict")
	}
	r2, conflict := cas(r1, "two")
	if conflict || r2 <= r1 {
		t.Fatalf("update on the current revision: revision %d, conflict %v", r2, conflict)
	}
	if _, conflict := cas(r1, "stale"); !conflict {
		t.Fatal("an update on a past revision was not a conflict")
	}
	stored("two")
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if r3, conflict := cas(0, "three"); conflict || r3 <= r2 {
		t.Fatalf("create over a deleted key: revision %d, conflict %v", r3, conflict)
	}
	stored("three")
	if err := js.DeleteStream(ctx, "KV_cas_chstate"); err != nil {
		t.Fatal(err)
	}
	if _, conflict, err := s.CASState(ctx, "k", 0, []byte("x")); err == nil || conflict {
		t.Fatalf("CAS with the stream gone: conflict %v, error %v; want an error", conflict, err)
	}
}
