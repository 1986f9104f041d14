package embednats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestStart_InProcessOnlyHasNoURL(t *testing.T) {
	s, err := Start(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	if u := s.ClientURL(); u != "" {
		t.Fatalf("ClientURL = %q, want empty without a listener", u)
	}
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatalf("JetStream not available: %v", err)
	}
	_ = info
}

func TestStart_RandomPortListensOnLoopback(t *testing.T) {
	var logs bytes.Buffer
	s, err := Start(Config{DataDir: t.TempDir(), Port: -1, Sync: SyncAlways,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	u := s.ClientURL()
	if u == "" {
		t.Fatal("ClientURL empty with Port -1")
	}
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	defer nc.Close()
	if got := nc.MaxPayload(); got != DefaultMaxPayload {
		t.Fatalf("MaxPayload = %d, want %d", got, DefaultMaxPayload)
	}
	if logs.Len() == 0 {
		t.Fatal("no server log lines reached the slog logger")
	}
}

func TestStart_RequiresDataDir(t *testing.T) {
	if _, err := Start(Config{}); err == nil {
		t.Fatal("Start without DataDir succeeded")
	}
}

func TestParseSyncPolicy(t *testing.T) {
	for _, p := range []SyncPolicy{SyncDefault, SyncAlways} {
		got, err := ParseSyncPolicy(p.String())
		if err != nil || got != p {
			t.Fatalf("ParseSyncPolicy(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Fatal("ParseSyncPolicy accepted an unknown name")
	}
}

func TestDial_ConnectsInProcessWithOptions(t *testing.T) {
	s, err := Start(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := s.Dial(context.Background(), nats.Name("dialled"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Flush(); err != nil {
		t.Fatalf("dialled connection does not answer: %v", err)
	}
	if nc.Opts.Name != "dialled" {
		t.Fatalf("Name = %q: the caller's option was not applied last", nc.Opts.Name)
	}
}

// A second server on a data directory in use fails at once and says so,
// instead of opening the first one's store; the directory is free again
// once the first has shut down.
func TestStart_DataDirInUse(t *testing.T) {
	dir := t.TempDir()
	first, err := Start(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	_, err = Start(Config{DataDir: dir})
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second Start: %v, want ErrDataDirInUse", err)
	}
	if d := time.Since(begun); d >= ReadyTimeout/2 { // far from the wait for a server, whatever the machine's load
		t.Errorf("refused after %v, want at once", d)
	}
	if want := fmt.Sprintf("process %d", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder (%s)", err, want)
	}
	first.Shutdown()
	again, err := Start(Config{DataDir: dir})
	if err != nil {
		t.Fatalf("Start after the first shut down: %v", err)
	}
	again.Shutdown()
}

// A taken NATS port is named at once rather than after ReadyTimeout, and
// the data directory is left free for the next try.
func TestStart_PortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	begun := time.Now()
	_, err = Start(Config{DataDir: dir, Host: "127.0.0.1", Port: port})
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Fatalf("Start on a taken port: %v, want ErrPortInUse naming %d", err, port)
	}
	if d := time.Since(begun); d >= ReadyTimeout/2 { // far from the wait for a server, whatever the machine's load
		t.Errorf("refused after %v, want at once", d)
	}
	s, err := Start(Config{DataDir: dir})
	if err != nil {
		t.Fatalf("data dir still locked after a failed Start: %v", err)
	}
	s.Shutdown()
}

// The hub's payload limit above 8 MB is deliberate: the server's hint
// about it is not a warning at every start, while its other warnings are.
func TestStart_PayloadHintIsNoWarning(t *testing.T) {
	var logs bytes.Buffer
	s, err := Start(Config{DataDir: t.TempDir(), MaxPayload: 8<<20 + 64<<10, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Shutdown()
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("start logged a warning:\n%s", logs.String())
	}
	var other bytes.Buffer
	slogAdapter{slog.New(slog.NewTextHandler(&other, nil))}.Warnf("disk %s is full", "x")
	if !strings.Contains(other.String(), "level=WARN") {
		t.Fatalf("another warning was not logged as one: %q", other.String())
	}
}
