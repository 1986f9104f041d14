package main

import (
	"context"
	"io"

	"github.com/rshub/rshub/internal/app"
)

// run parses settings and runs the hub until ctx ends.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), logOut io.Writer, ready func(app.Started)) error {
	s, err := parseSettings(args, lookup, logOut)
	if err != nil {
		return err
	}
	logger, err := newLogger(s, logOut)
	if err != nil {
		return err
	}
	return app.Run(ctx, s, logger, ready)
}
