// Command datasetsource is an example RDF dataset Source in the layout
// Timbuctoo imports: it keeps a dataset (N-Quads) in a directory, edits it
// at random, writes each edit as an N-Quads Unified Diff patch (.nqud),
// announces each patch to a hub as a change notification, and serves the
// Source Description, the dataset's Capability List (with its VoID-style
// description), Resource List (dataset.nq) and Change List (the patches).
// See package source for the URL layout.
//
// With a hub started by `go run ./cmd/hub --demo` (open demo channel):
//
//	go run ./examples/datasetsource --dir /tmp/ds --hub http://127.0.0.1:8080/ --topic http://127.0.0.1:8080/topics/demo --edits 100
//
// Stopped and started again on the same --dir, it goes on where it
// stopped: the same dataset and patches, and the patches the hub did not
// acknowledge announced again. It prints one line when it serves and one
// per patch the hub acknowledged.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rshub/rshub/examples/datasetsource/source"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "datasetsource:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("datasetsource", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory of the dataset, its patches and state (required; reused after a restart)")
	listen := fs.String("listen", "127.0.0.1:8071", "HTTP listen address")
	public := fs.String("public-url", "", "URL this server is reached at (default http://<listen>)")
	hub := fs.String("hub", "", "hub URL to publish to (none: pull only)")
	topic := fs.String("topic", "", "topic URI (default <public-url>/<name>/topic)")
	token := fs.String("token", os.Getenv("DATASETSOURCE_TOKEN"), "publisher token of the channel (default $DATASETSOURCE_TOKEN)")
	name := fs.String("name", "dataset1", "dataset name (path segment)")
	edits := fs.Int("edits", 0, "edits to make in the Source's life, restarts included (0: no limit)")
	quads := fs.Int("quads", 20, "quads added or retracted per edit")
	seed := fs.Uint64("seed", 1, "seed of the random edits")
	interval := fs.Duration("interval", time.Second, "pause between two edits")
	title := fs.String("title", "", "dataset title in the description (default: a built-in title)")
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
		return fmt.Errorf("listen: %w", err)
	}
	if *public == "" {
		*public = "http://" + ln.Addr().String()
	}
	src, err := source.New(ctx, source.Config{
		Dir: *dir, PublicURL: *public, Name: *name, Hub: *hub, Topic: *topic, Token: *token,
		QuadsPerEdit: *quads, Seed: *seed, Edits: *edits, Interval: *interval,
		Description: source.Description{Title: *title}, Logger: logger,
		OnPublish: func(p source.Patch) {
			fmt.Printf("published patch %d (%s): +%d -%d\n", p.N, p.File, p.Adds, p.Retracts)
		},
	})
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: src.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	st := src.Status()
	fmt.Printf("serving %s at %s (Capability List %s, topic %s, %d patches, %d quads)\n", *dir, *public, src.CapabilityListURL(), src.Topic(), st.Patches, st.Quads)
	err = src.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return err
}
