package main

import (
	"context"
	"io"

	"github.com/rshub/rshub/server"
)

// run parses settings and runs the hub until ctx ends.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), logOut io.Writer, ready func(server.Started)) error {
	s, err := parseSettings(args, lookup, logOut)
	if err != nil {
		return err
	}
	logger, err := newLogger(s, logOut)
	if err != nil {
		return err
	}
	return server.Run(ctx, s, logger, ready)
}
