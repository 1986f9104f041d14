package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"
)

// fleetProc is the parent's handle on the client fleet child process.
type fleetProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	enc *json.Encoder
}

// startFleet starts the child: cfg.FleetCommand, or this executable with
// the hidden --internal-ws-fleet flag.
func startFleet(cfg Config, lg *slog.Logger) (*fleetProc, error) {
	argv := cfg.FleetCommand
	if len(argv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("websocket fleet: find own executable: %w", err)
		}
		argv = []string{self, "--" + FleetFlag}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), cfg.FleetEnv...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("websocket fleet: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("websocket fleet: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("websocket fleet: start %s: %w", argv[0], err)
	}
	lg.Info("websocket: client fleet child started", "pid", cmd.Process.Pid)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &fleetProc{cmd: cmd, in: in, out: sc, enc: json.NewEncoder(in)}, nil
}

// call sends c and waits for the answer, at most limit.
func (p *fleetProc) call(ctx context.Context, c fleetCmd, limit time.Duration) (fleetReply, error) {
	if err := p.enc.Encode(c); err != nil {
		return fleetReply{}, fmt.Errorf("websocket fleet %s: %w", c.Op, err)
	}
	got := make(chan error, 1)
	var r fleetReply
	go func() {
		if !p.out.Scan() {
			got <- fmt.Errorf("websocket fleet %s: child ended: %v", c.Op, p.out.Err())
			return
		}
		got <- json.Unmarshal(p.out.Bytes(), &r)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-got:
		if err != nil {
			return r, err
		}
		if r.Err != "" {
			return r, fmt.Errorf("websocket fleet %s: %s", c.Op, r.Err)
		}
		return r, nil
	case <-t.C:
		p.kill()
		return r, fmt.Errorf("websocket fleet %s: no answer within %v; child killed", c.Op, limit)
	case <-ctx.Done():
		p.kill()
		return r, ctx.Err()
	}
}

func (p *fleetProc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// close ends the child by closing its stdin, killing it if it lingers.
func (p *fleetProc) close() {
	_ = p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.kill()
		<-done
	}
}
