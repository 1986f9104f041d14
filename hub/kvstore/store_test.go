package kvstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

func TestOpen_TwiceSharesState(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PutChannel(ctx, hub.Channel{Topic: "https://example.org/t", Name: "t"}); err != nil {
		t.Fatal(err)
	}
	b, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Channel(ctx, "https://example.org/t"); err != nil {
		t.Fatalf("second Open does not see the first's channel: %v", err)
	}
	other, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Channel(ctx, "https://example.org/t"); err == nil {
		t.Fatal("a store with another prefix sees the channel")
	}
}
