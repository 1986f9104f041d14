// Command pullsource is a ResourceSync Source that only serves pull-mode
// documents, in one of the ways real Sources do (package source): a hub
// has to follow it. It makes a change every --every and serves its Source
// Description at /.well-known/resourcesync.
//
//	go run ./examples/pullsource --mode simulator --listen 127.0.0.1:8072
//
// then create a channel following it on a hub (admin API):
//
//	{"name": "pulled", "follow": "http://127.0.0.1:8072/", "pollInterval": "5s"}
//
// Modes: index (dated Change Lists under a Change List Index), simulator
// (one Change List regenerated on every request, its until the time of the
// request, as the resync reference Source), archive (closed lists move into
// a Change List Archive), resourcelist (no Change List: a Resource List of
// the resources as they are), resourcelist-index (the same in sitemaps under
// a Resource List Index). --lenient adds what lenient Sources do (no root
// from, relative locations, entries without a time or out of order);
// --clock-offset sets the Source's clock off.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rshub/rshub/examples/pullsource/source"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pullsource:", err)
		os.Exit(1)
	}
}

var modes = map[string]source.Mode{"index": source.ModeIndex, "simulator": source.ModeSimulator, "archive": source.ModeArchive,
	"resourcelist": source.ModeResourceList, "resourcelist-index": source.ModeResourceListIndex}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("pullsource", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8072", "HTTP listen address")
	mode := fs.String("mode", "index", "index, simulator, archive, resourcelist or resourcelist-index")
	rotate := fs.Int("rotate", 5, "changes in a Change List before it is closed (index, archive); resources per sitemap (resourcelist-index)")
	every := fs.Duration("every", time.Second, "time between two changes")
	offset := fs.Duration("clock-offset", 0, "how far the Source's clock is off")
	lenient := fs.Bool("lenient", false, "no root from, relative locations, entries without a time and out of order")
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, ok := modes[*mode]
	if !ok || *every <= 0 {
		return fmt.Errorf("--mode must be index, simulator, archive, resourcelist or resourcelist-index and --every positive")
	}
	src := source.New(source.Config{Mode: m, RotateEvery: *rotate, Clock: time.Now, ClockOffset: *offset,
		OmitFrom: *lenient, RelativeLocs: *lenient, Disorder: *lenient, Timeless: *lenient})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	src.SetBase("http://" + ln.Addr().String())
	srv := &http.Server{Handler: src, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		tick := time.NewTicker(*every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				src.Change(1)
			}
		}
	}()
	fmt.Printf("pullsource: %s mode, Source Description at http://%s%s\n", *mode, ln.Addr(), source.PathDescription)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
