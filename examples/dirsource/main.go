// Command dirsource is an example ResourceSync Source: it watches a
// directory (by polling) and publishes a change notification to a hub for
// the files created, updated or deleted since the last scan, each with its
// md5 and sha-256 hash and length, and serves the files, a Resource List, a
// Capability List and a Source Description so destinations can follow it.
//
// With a hub started by `go run ./cmd/hub --demo` (open demo channel):
//
//	go run ./examples/dirsource --dir /tmp/src --hub http://127.0.0.1:8080/ --topic http://127.0.0.1:8080/topics/demo
//
// then mirror it:
//
//	go run ./cmd/subscriber --source http://127.0.0.1:8070/ --mirror /tmp/mirror --base-url http://127.0.0.1:8070/files/
//
// For a channel of your own, declare it on the hub (--channels file with
// "topic": "http://127.0.0.1:8070/topic", "trust": "token", "token": ...) and
// give the same --token here; the topic URI then defaults to /topic on this
// server, which answers with Link rel="self" and rel="hub".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rshub/rshub/examples/dirsource/source"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "dirsource:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("dirsource", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to publish (required)")
	listen := fs.String("listen", "127.0.0.1:8070", "HTTP listen address")
	public := fs.String("public-url", "", "URL this server is reached at (default http://<listen>)")
	hub := fs.String("hub", "http://127.0.0.1:8080/", "hub URL")
	topic := fs.String("topic", "", "topic URI (default <public-url>/topic)")
	token := fs.String("token", os.Getenv("DIRSOURCE_TOKEN"), "publisher token of the channel (default $DIRSOURCE_TOKEN)")
	interval := fs.Duration("interval", 2*time.Second, "how often to scan the directory")
	state := fs.String("state", "", "state file, to resume after a restart (optional)")
	verbose := fs.Bool("v", false, "log every notification")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("--dir is required")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *public == "" {
		*public = "http://" + ln.Addr().String()
	}
	rep := &hubReport{out: out, hub: *hub}
	src, err := source.New(ctx, source.Config{
		Dir: *dir, PublicURL: *public, Hub: *hub, Topic: *topic, Token: *token, Interval: *interval, StatePath: *state, Logger: logger,
		OnPublish: func(p source.Published) {
			rep.answered()
			fmt.Fprintf(out, "published seq=%d until=%s %v\n", p.Seq, p.Until.Format(time.RFC3339Nano), p.Changes)
		},
		OnRetry: func(_ int, err error, _ time.Duration) { rep.failed(err) },
	})
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: src.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(out, "serving %s at %s, topic %s\n", *dir, *public, src.Topic())
	if err := probeHub(ctx, *hub); err != nil {
		rep.failed(err)
	}
	err = src.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return err
}
