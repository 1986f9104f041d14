// Command rshub-bench measures the hub beside the machine's own ceiling in
// the same run and prints medians and ratios. See README.md and --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rshub/rshub/cmd/rshub-bench/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 1 && args[0] == "--"+bench.HubFlag {
		lg := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("in", "hub")
		if err := bench.RunHubChild(ctx, os.Stdin, os.Stdout, lg); err != nil {
			fmt.Fprintln(os.Stderr, "rshub-bench hub:", err)
			return 1
		}
		return 0
	}
	cfg, fleet, err := bench.ParseFlags(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rshub-bench:", err)
		return 2
	}
	lg := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if fleet {
		if err := bench.RunFleet(ctx, os.Stdin, os.Stdout, lg.With("in", "fleet")); err != nil {
			fmt.Fprintln(os.Stderr, "rshub-bench fleet:", err)
			return 1
		}
		return 0
	}
	if cfg.CPUProfile != "" {
		stopProfile, err := bench.StartCPUProfile(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rshub-bench:", err)
			return 1
		}
		defer stopProfile()
	}
	rep, err := bench.Run(ctx, cfg, lg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rshub-bench:", err)
		return 1
	}
	if err := bench.WriteReport(os.Stdout, rep, cfg.JSON); err != nil {
		fmt.Fprintln(os.Stderr, "rshub-bench:", err)
		return 1
	}
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}
