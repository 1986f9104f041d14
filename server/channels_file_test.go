package server

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/edgetest"
	"github.com/rshub/rshub/internal/testenv"
)

// The --channels file takes channels by the rule of POST /admin/channels:
// every hostile definition stops the start with the reason, and none is
// stored (issue 23 items 4, 5 and 9).
func TestChannelsFile_HostileDefinitionsRefused(t *testing.T) {
	ctx := context.Background()
	_, nc := testenv.NATS(t)
	lg, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lg.Close() })
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(hub.Config{HubURL: "http://127.0.0.1:1/", Store: st, Log: lg, Client: http.DefaultClient, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "channels.json")
	load := func(list string) error {
		if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadChannels(ctx, h, Config{ChannelsFile: file})
		return err
	}
	for _, c := range edgetest.Channels() {
		if err := load("[" + string(c.JSON()) + "]"); err == nil {
			t.Errorf("%s: loaded", c.Why)
		}
	}
	if chs, err := st.Channels(ctx); err != nil || len(chs) != 0 {
		t.Fatalf("store holds %d channels (%v), want none", len(chs), err)
	}
	if err := load(`[{"name": "ok", "hosted": true, "trust": "open"}]`); err != nil {
		t.Fatalf("a good file: %v", err)
	}
}
