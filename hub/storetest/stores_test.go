package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/testenv"
)

// The contract runs here against both stores, so that it stays test code.

func openKV(t *testing.T, prefix string) hub.Store {
	t.Helper()
	_, nc := testenv.NATS(t)
	return openKVOn(t, nc, prefix)
}

func openKVOn(t *testing.T, nc *nats.Conn, prefix string) hub.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openRedis(t *testing.T, url, prefix string) hub.Store {
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

func TestStore_Contract(t *testing.T) {
	t.Run("kvstore", func(t *testing.T) {
		Run(t, func(t *testing.T) hub.Store { return openKV(t, "") })
	})
	t.Run("redisstore", func(t *testing.T) {
		url := testenv.Redis(t)
		n := 0
		Run(t, func(t *testing.T) hub.Store {
			n++ // a fresh prefix gives each test an empty store on one server
			return openRedis(t, url, fmt.Sprintf("t%d", n))
		})
	})
}

func TestStore_SharedByTwoProcesses(t *testing.T) {
	t.Run("kvstore", func(t *testing.T) {
		_, nc := testenv.NATS(t)
		Shared(t, openKVOn(t, nc, "s"), openKVOn(t, nc, "s"))
	})
	t.Run("redisstore", func(t *testing.T) {
		url := testenv.Redis(t)
		Shared(t, openRedis(t, url, "s"), openRedis(t, url, "s"))
	})
}
