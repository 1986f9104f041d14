package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/testenv"
)

func open(t *testing.T, url, prefix string) *redisstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := redisstore.Open(ctx, url, redisstore.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpen_PrefixesIsolateStores(t *testing.T) {
	url := testenv.Redis(t)
	a, b := open(t, url, "a"), open(t, url, "b")
	ctx := context.Background()
	if err := a.PutChannel(ctx, hub.Channel{Topic: "https://example.org/t", Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Channel(ctx, "https://example.org/t"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("store with another prefix: err = %v, want ErrNotFound", err)
	}
	if _, err := open(t, url, "a").Channel(ctx, "https://example.org/t"); err != nil {
		t.Fatalf("second store with the same prefix: %v", err)
	}
}

func TestOpen_UnreachableFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := redisstore.Open(ctx, "redis://127.0.0.1:1/0", redisstore.Config{}); err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if _, err := redisstore.Open(ctx, "not a url", redisstore.Config{}); err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
}
