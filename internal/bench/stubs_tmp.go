package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
)

type wsBench struct{}

func newWSBench(context.Context, Config, *slog.Logger) (*wsBench, error) { return nil, errors.New("todo") }
func (*wsBench) run(context.Context) ([]sample, error)                    { return nil, nil }
func (*wsBench) close()                                                   {}
func wsNotes(Config) []string                                             { return nil }

type natsBench struct{}

func newNATSBench(context.Context, Config, *slog.Logger) (*natsBench, error) {
	return nil, errors.New("todo")
}
func (*natsBench) run(context.Context) ([]sample, error) { return nil, nil }
func (*natsBench) close()                                {}
func natsNotes() []string                                { return nil }
func RunFleet(context.Context, io.Reader, io.Writer, *slog.Logger) error { return nil }
