// Command demo shows rshub end to end in one process, in under a minute:
// a hub (embedded NATS, the open demo channel), a Source publishing a
// temporary directory that the demo changes every few seconds
// (examples/dirsource), and a destination mirroring it through a WebSub
// subscription (client/mirror), printing what flows.
//
//	go run ./examples/demo                 # stops after 5 minutes or on Ctrl-C
//	go run ./examples/demo --duration 30s
//
// At the end it compares the mirror with the Source directory.
package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/examples/dirsource/source"
	"github.com/rshub/rshub/server"
)

func main() {
	duration := flag.Duration("duration", 5*time.Minute, "how long the demo runs")
	every := flag.Duration("every", 3*time.Second, "how often the demo changes the Source directory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	if err := run(ctx, os.Stdout, *every); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, every time.Duration) error {
	// the Source and the mirror outlive the changes by a short settling
	// time, so the demo ends with the mirror caught up
	changes := ctx
	ctx, stopAll := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAll()
	tmp, err := os.MkdirTemp("", "rshub-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	srcDir, mirrorDir := filepath.Join(tmp, "source"), filepath.Join(tmp, "mirror")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

	// 1. the hub, in-process
	var tok [12]byte
	_, _ = crand.Read(tok[:])
	token := hex.EncodeToString(tok[:])
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	started, hubDone := make(chan server.Started, 1), make(chan error, 1)
	go func() {
		hubDone <- server.Run(hubCtx, hubConfig(filepath.Join(tmp, "hub"), token), quiet, func(s server.Started) { started <- s })
	}()
	defer func() { stopHub(); <-hubDone }()
	var hub server.Started
	select {
	case hub = <-started:
	case err := <-hubDone:
		return fmt.Errorf("hub: %w", err)
	}
	topic := hub.HubURL + "topics/demo"
	fmt.Fprintf(out, "hub      %s (demo topic %s)\n", hub.HubURL, topic)
	fmt.Fprintf(out, "watch    %sdashboard/#token=%s\n", hub.HubURL, token)

	// 2. the Source: the demo directory, published to the demo channel
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	public := "http://" + ln.Addr().String()
	first := true
	src, err := source.New(ctx, source.Config{Dir: srcDir, PublicURL: public, Hub: hub.HubURL, Topic: topic, Interval: time.Second,
		OnPublish: func(p source.Published) {
			if first && p.Seq > 1 {
				fmt.Fprintf(out, "source   (sequence numbers count every notification in the hub's one log: those before %d are\n"+
					"         the hub's framework notifications announcing the new channel, on demo-framework)\n", p.Seq)
			}
			first = false
			fmt.Fprintf(out, "source   published seq %d: %v\n", p.Seq, p.Changes)
		}})
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: src.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(out, "source   %s serving %s\n", public, srcDir)

	// 3. the destination: a mirror fed by a WebSub subscription
	m, err := mirror.Open(mirror.Config{Dir: mirrorDir, Hub: hub.HubURL, Topic: topic, BaseURL: public + "/files/",
		ResourceList: public + "/resourcelist.xml", Events: func(e mirror.Event) { printEvent(out, e) }})
	if err != nil {
		return err
	}
	cb, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mirror   %s (callback http://%s/callback)\n\n", mirrorDir, cb.Addr())
	// the Source and the mirror stop, and are waited for, before the hub
	// does: a mirror outliving its hub would report failed catch-ups
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopRun(); wg.Wait() }()
	wg.Go(func() { _ = src.Run(runCtx) })
	wg.Go(func() { _ = m.RunWebhook(runCtx, mirror.WebhookConfig{Listener: cb, Resync: time.Minute}) })

	// 4. change the Source now and then
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-changes.Done():
			return settle(out, srcDir, mirrorDir, 15*time.Second)
		case <-t.C:
			if err := change(rng, srcDir); err != nil {
				return err
			}
		}
	}
}

// hubConfig is the settings of `hub --demo` with its data in dir, listening
// on 127.0.0.1:8080 when that is free (any free port otherwise), with an
// admin token for the dashboard, taking edge hubs (`make run-edge`) on
// 127.0.0.1:7422 when that is free.
func hubConfig(dir, token string) server.Config {
	cfg := server.Defaults()
	cfg.Listen = "127.0.0.1:8080"
	if !free(cfg.Listen) {
		cfg.Listen = "127.0.0.1:0"
	}
	// the demo's leaf link password, shared with `make run-edge` (run from
	// the repository's root): a loopback demo's, never a production one's
	if _, err := os.Stat(demoLeafPassword); err == nil && free("127.0.0.1:7422") {
		cfg.LeafListen, cfg.LeafPasswordFile = "127.0.0.1:7422", demoLeafPassword
	}
	cfg.DataDir, cfg.NATSListen, cfg.Demo, cfg.AdminToken = dir, "off", true, token
	cfg.LogLevel, cfg.ShutdownTimeout, cfg.StartupTimeout = "error", 5*time.Second, 30*time.Second
	return cfg
}

// demoLeafPassword is the file of the password edge hubs of the demo
// (`make run-edge`) link with.
const demoLeafPassword = "examples/demo/leaf-password"

// free reports whether addr can be listened on.
func free(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// change creates, rewrites or deletes a file or two.
func change(rng *rand.Rand, dir string) error {
	for range 1 + rng.IntN(2) {
		p := filepath.Join(dir, fmt.Sprintf("notes-%d.txt", rng.IntN(6)))
		if _, err := os.Stat(p); err == nil && rng.IntN(3) == 0 {
			if err := os.Remove(p); err != nil {
				return err
			}
			continue
		}
		// written beside the Source directory and renamed into place, as a
		// careful Source does: a scan never sees a half-written file (which
		// it would announce with its length then, 0)
		tmp := filepath.Join(filepath.Dir(dir), filepath.Base(p)+".tmp")
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "written at %s\n", time.Now().Format(time.RFC3339Nano)), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

func printEvent(out io.Writer, e mirror.Event) {
	switch e.Kind {
	case mirror.EventNotification:
		fmt.Fprintf(out, "mirror   notification [%s, %s]: %s\n", e.From.Format("15:04:05.000"), e.Until.Format("15:04:05.000"), mirror.Count(e.Entries, "entry", "entries"))
	case mirror.EventFile:
		fmt.Fprintf(out, "mirror     %s %s\n", e.Change, e.Path)
	case mirror.EventProgress:
	default:
		fmt.Fprintf(out, "mirror   %s\n", e)
	}
}

// settle waits, at most timeout, for the mirror to equal the Source
// directory (the last changes are still being published and applied), then
// says how it ended.
func settle(out io.Writer, src, mirror string, timeout time.Duration) error {
	fmt.Fprintln(out, "\nno more changes; waiting for the mirror to catch up")
	deadline := time.Now().Add(timeout)
	for {
		na, nb, same := compare(src, mirror)
		if same || time.Now().After(deadline) {
			fmt.Fprintf(out, "demo over: %d files at the Source, %d in the mirror, identical: %v\n", na, nb, same)
			return nil
		}
		time.Sleep(200 * time.Millisecond) // poll interval with a deadline
	}
}

// compare reports the file counts of both directories and whether their
// contents are identical.
func compare(a, b string) (int, int, bool) {
	read := func(root string) map[string][]byte {
		out := map[string][]byte{}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				out[rel], _ = os.ReadFile(p)
			}
			return nil
		})
		return out
	}
	fa, fb := read(a), read(b)
	same := len(fa) == len(fb)
	for k, v := range fa {
		same = same && bytes.Equal(v, fb[k])
	}
	return len(fa), len(fb), same
}
