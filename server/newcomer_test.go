package server_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// runErr runs a hub with cfg that must refuse to start, and returns its
// error.
func runErr(t *testing.T, cfg server.Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := server.Run(ctx, cfg, slog.New(slog.DiscardHandler), func(server.Started) {
		t.Error("the hub started")
		cancel()
	})
	if err == nil {
		t.Fatal("the hub ran and stopped without an error")
	}
	return err
}

// A hub without --admin-token answers the dashboard's and the admin API's
// paths with a 404 that says they need --admin-token, never a bare "404
// page not found".
func TestAdminOff_DashboardAndAdminSayTheyNeedAdminToken(t *testing.T) {
	st := servertest.Start(t, nil, func(c *server.Config) { c.Demo, c.AdminToken = false, "" })
	base := "http://" + st.Addr
	for _, path := range []string{"/dashboard/", "/dashboard/app.js", "/admin/summary", "/admin/channels"} {
		status, body := get(t, base+path)
		if status != 404 || !strings.Contains(body, "--admin-token") || strings.Contains(body, "404 page not found") {
			t.Errorf("GET %s without an admin token: %d %q, want a 404 saying it needs --admin-token", path, status, body)
		}
	}
}

// Loading --channels is logged with the file and how many channels it
// holds.
func TestChannelsFile_LoadIsLoggedWithItsCount(t *testing.T) {
	file := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(file, []byte(`[{"name": "a", "hosted": true, "trust": "open"}, {"name": "b", "hosted": true, "trust": "open"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := &testenv.Buffer{}
	servertest.Start(t, slog.New(slog.NewTextHandler(out, nil)), func(c *server.Config) { c.ChannelsFile, c.LogLevel = file, "info" })
	if log := out.String(); !strings.Contains(log, `msg="--channels file loaded" file=`+file+" channels=2") {
		t.Fatalf("the log does not say the --channels file was loaded with 2 channels:\n%s", log)
	}
}

// A taken NATS port is named by the flag whose address it is, and a
// listener that is off is never named ("--leaf-listen off is taken").
func TestNATSPortTaken_NamesTheListenerThatIsOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	leafPW := filepath.Join(t.TempDir(), "leaf-password") // --leaf-listen needs one
	if err := os.WriteFile(leafPW, []byte("leaf-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		nats, leaf, want, never string
	}{
		{taken, "off", "--nats-listen " + taken + " is taken", "--leaf-listen"},
		{"off", taken, "--leaf-listen " + taken + " is taken", "--nats-listen"},
	} {
		cfg := servertest.Config(t)
		cfg.NATSListen, cfg.LeafListen, cfg.LeafPasswordFile = tc.nats, tc.leaf, leafPW
		msg := runErr(t, cfg).Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.never) {
			t.Errorf("--nats-listen %s --leaf-listen %s: %q, want %q and no %s", tc.nats, tc.leaf, msg, tc.want, tc.never)
		}
	}
}

// A private channel in --channels on a hub without a subscriber key stops
// the start, naming --subscriber-jwt-key: no one could ever read it.
func TestPrivateChannel_WithoutSubscriberKeyRefusesTheStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(file, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := servertest.Config(t)
	cfg.ChannelsFile = file
	if err := runErr(t, cfg); !strings.Contains(err.Error(), "--subscriber-jwt-key") {
		t.Fatalf("a private channel without a subscriber key: %v, want a refusal naming --subscriber-jwt-key", err)
	}
}

// A hub restarted without a subscriber key on a data directory holding a
// private channel warns that no one can read it, naming the channel and
// the flag.
func TestPrivateChannel_StoredOneWithoutKeyIsWarnedOf(t *testing.T) {
	k := accesstest.NewSecret(t)
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(file, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := servertest.Config(t)
	cfg.DataDir, cfg.ChannelsFile, cfg.SubscriberJWTKey, cfg.Demo = dir, file, k.Secret, false // the demo channel's topic has the port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := server.Run(ctx, cfg, slog.New(slog.DiscardHandler), func(server.Started) { cancel() }); err != nil {
		t.Fatalf("the first hub, with a key: %v", err)
	}
	out := &testenv.Buffer{}
	servertest.Start(t, slog.New(slog.NewTextHandler(out, nil)), func(c *server.Config) { c.DataDir, c.Demo = dir, false })
	if log := out.String(); !strings.Contains(log, "private channels no one can read") || !strings.Contains(log, "secret") || !strings.Contains(log, "--subscriber-jwt-key") {
		t.Fatalf("the hub without a key does not warn of channel secret:\n%s", log)
	}
}
