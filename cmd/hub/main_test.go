package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/server"
)

func noEnv(string) (string, bool) { return "", false }

func TestHelp_DocumentsEverySettingWithDefaultAndEnv(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, noEnv, &out, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"--listen", "RSHUB_LISTEN", "(default 127.0.0.1:8080)", "--nats-url", "--redis-url", "--sync", "--admin-token", "--allow-networks", "--retry", "--lease-max", "(default 2678400)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestSettings_BadValuesFailFast(t *testing.T) {
	cases := map[string][]string{
		"log format":     {"--log-format", "xml"},
		"max body":       {"--max-body", "0"},
		"unknown flag":   {"--frobnicate"},
		"stray argument": {"extra"},
		"signature":      {"--signature", "md5"},
		"retry schedule": {"--retry", "0s,x2", "--listen", "127.0.0.1:0", "--data-dir", ""},
		"sync":           {"--sync", "sometimes", "--data-dir", "", "--listen", "127.0.0.1:0"},
		"lease policy":   {"--lease-min", "900", "--lease-default", "600", "--listen", "127.0.0.1:0", "--data-dir", ""},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if name == "sync" || name == "lease policy" || name == "retry schedule" {
				args = append(args[:len(args)-1], t.TempDir())
			}
			err := run(ctx, append(args, "--nats-listen", "off"), noEnv, io.Discard, func(server.Started) { t.Error("hub started despite a bad setting") })
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestRun_ServesHealthAndReadinessThenStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-listen", "off", "--demo"}, noEnv, io.Discard, func(s server.Started) { ready <- s })
	}()
	var st server.Started
	select {
	case st = <-ready:
	case err := <-done:
		t.Fatalf("hub exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("hub not ready within 30s")
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + st.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	resp, err := http.Head("http://" + st.Addr + "/topics/demo")
	if err != nil || resp.StatusCode != http.StatusNoContent { // no notification yet
		t.Fatalf("demo topic: %v %v", resp, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no shutdown within 30s")
	}
}
