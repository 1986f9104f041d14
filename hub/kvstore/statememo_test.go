package kvstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

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
