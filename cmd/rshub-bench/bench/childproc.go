package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// childProc is the parent's end of a child process that reads one JSON
// command per line on its stdin and answers each with one JSON line on
// its stdout (the WebSocket client fleet, a hub child). Closing its stdin
// ends it.
type childProc struct {
	what string // names the child in errors
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	enc  *json.Encoder
}

// startChild starts argv, or this executable with --flag when argv is
// empty, with env added to the environment.
func startChild(what string, argv []string, flag string, env []string) (*childProc, error) {
	if len(argv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%s: find own executable: %w", what, err)
		}
		argv = []string{self, "--" + flag}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", what, argv[0], err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &childProc{what: what, cmd: cmd, in: in, out: sc, enc: json.NewEncoder(in)}, nil
}

// call sends req and decodes the answer into resp, waiting at most limit;
// a child that does not answer in time is killed. op names the command.
func (p *childProc) call(ctx context.Context, op string, req, resp any, limit time.Duration) error {
	if err := p.enc.Encode(req); err != nil {
		return fmt.Errorf("%s %s: %w", p.what, op, err)
	}
	got := make(chan error, 1)
	go func() {
		if !p.out.Scan() {
			got <- fmt.Errorf("%s %s: child ended: %v", p.what, op, p.out.Err())
			return
		}
		got <- json.Unmarshal(p.out.Bytes(), resp)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-got:
		return err
	case <-t.C:
		p.kill()
		return fmt.Errorf("%s %s: no answer within %v; child killed", p.what, op, limit)
	case <-ctx.Done():
		p.kill()
		return ctx.Err()
	}
}

// pid is the child's process id.
func (p *childProc) pid() int { return p.cmd.Process.Pid }

func (p *childProc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// close ends the child by closing its stdin, killing it if it lingers.
func (p *childProc) close() { p.stop(30 * time.Second) }

// stop closes the child's stdin and waits up to limit for it to end, then
// kills it; it tells whether it had to.
func (p *childProc) stop(limit time.Duration) (killed bool) {
	_ = p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
		return false
	case <-time.After(limit):
		p.kill()
		<-done
		return true
	}
}

// killNow kills the child with SIGKILL, giving it no chance to stop
// cleanly, and waits for it to end.
func (p *childProc) killNow() {
	p.kill()
	_ = p.in.Close()
	_ = p.cmd.Wait()
}
