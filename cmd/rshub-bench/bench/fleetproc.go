package bench

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// fleetProc is the parent's handle on the client fleet child process.
type fleetProc struct{ *childProc }

// startFleet starts the child: cfg.FleetCommand, or this executable with
// the hidden --internal-ws-fleet flag.
func startFleet(cfg Config, lg *slog.Logger) (*fleetProc, error) {
	p, err := startChild("websocket fleet", cfg.FleetCommand, FleetFlag, cfg.FleetEnv)
	if err != nil {
		return nil, err
	}
	lg.Info("websocket: client fleet child started", "pid", p.pid())
	return &fleetProc{p}, nil
}

// call sends c and waits for the answer, at most limit.
func (p *fleetProc) call(ctx context.Context, c fleetCmd, limit time.Duration) (fleetReply, error) {
	var r fleetReply
	if err := p.childProc.call(ctx, c.Op, c, &r, limit); err != nil {
		return r, err
	}
	if r.Err != "" {
		return r, fmt.Errorf("websocket fleet %s: %s", c.Op, r.Err)
	}
	return r, nil
}
