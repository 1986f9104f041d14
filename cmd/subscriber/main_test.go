package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/internal/docstest"
)

func noEnv(string) (string, bool) { return "", false }

func TestHelp_DocumentsEveryFlagWithItsEnvironmentVariable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, noEnv, &out, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, f := range []string{"source", "hub", "topic", "mirror", "state", "transport", "listen", "callback-url", "unsubscribe-on-exit", "nats-url", "json", "resync", "base-url", "filter-prefix", "filter-change"} {
		if !strings.Contains(out.String(), "--"+f+" ") || !strings.Contains(out.String(), "RSHUB_SUBSCRIBER_"+strings.ToUpper(strings.ReplaceAll(f, "-", "_"))) {
			t.Errorf("--help does not document --%s and its variable", f)
		}
	}
}

func TestSettings_RefusesBadCombinations(t *testing.T) {
	for _, args := range [][]string{
		{"--hub", "http://h/", "--topic", "http://t/"}, // no mirror
		{"--mirror", "m"},                       // nothing to follow
		{"--mirror", "m", "--hub", "http://h/"}, // topic missing
		{"--mirror", "m", "--source", "http://s/", "--transport", "carrier-pigeon"}, // bad transport
		{"--mirror", "m", "--source", "http://s/", "stray"},                         // stray argument
	} {
		var out bytes.Buffer
		if _, err := parseSettings(args, noEnv, &out); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	env := func(k string) (string, bool) {
		if k == "RSHUB_SUBSCRIBER_TRANSPORT" {
			return "nats", true
		}
		return "", false
	}
	s, err := parseSettings([]string{"--mirror", "m", "--source", "http://s/"}, env, &bytes.Buffer{})
	if err != nil || s.Transport != "nats" {
		t.Fatalf("environment not applied: %+v %v", s, err)
	}
}

func TestPrinter_BarOnTerminalLinesOtherwise(t *testing.T) {
	if got := progressBar(5, 10, 10, "lists"); got != "[#####.....] 5/10 lists" {
		t.Fatalf("bar %q", got)
	}
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	p := &printer{out: &out, bar: true}
	p.event(mirror.Event{Time: at, Kind: mirror.EventProgress, Done: 1, Total: 2, Message: "lists"})
	p.event(mirror.Event{Time: at, Kind: mirror.EventFile, Change: "created", Path: "a/b"})
	if want := "\r[###############...............] 1/2 lists\r\033[K10:00:00 file created a/b\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	p = &printer{out: &out, json: true}
	p.event(mirror.Event{Time: at, Kind: mirror.EventNotification, Seq: 3, Entries: 2})
	if !strings.HasPrefix(out.String(), `{"time":"2026-01-01T10:00:00Z","event":"notification","seq":3,"entries":2}`) {
		t.Fatalf("json %q", out.String())
	}
}

// docs/settings.md quotes --help as it is.
func TestHelp_SettingsPageIsCurrent(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, noEnv, &out, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	docstest.Same(t, "settings.md", "## cmd/subscriber", out.String(), "scripts/settings-doc.sh")
}
