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
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rshub/rshub/server"
)

// HubFlag is the hidden flag that turns the bench binary into a hub child
// process (RunHubChild on its stdin and stdout). It is not listed by
// --help.
const HubFlag = "internal-hub"

// hubChildMsg is one line between the parent and a hub child: the parent
// sends the server.Config first and then commands ("settle", "profile");
// the child
// answers the config once the hub serves and each command once done.
type hubChildMsg struct {
	Config     *server.Config `json:"config,omitempty"`
	CPUProfile string         `json:"cpuProfile,omitempty"` // with Config: write a CPU profile here
	Op         string         `json:"op,omitempty"`
	// Path and Ms are the profile op's file and duration.
	Path string `json:"path,omitempty"`
	Ms   int64  `json:"ms,omitempty"`

	Err        string `json:"err,omitempty"`
	Addr       string `json:"addr,omitempty"`
	HubURL     string `json:"hubURL,omitempty"`
	HeapStack  uint64 `json:"heapStack,omitempty"` // settle: HeapInuse + StackInuse after GC
	Goroutines int    `json:"goroutines,omitempty"`
}

// RunHubChild is the hub child process: it reads a server.Config from in,
// runs that hub and answers on out once it serves, then answers "settle"
// commands (full GC and release of free memory to the OS, so that the
// parent reads a settled RSS) until in ends or ctx does; then it stops the
// hub. The hub runs in its own process so that its CPU time and RSS are
// its own.
func RunHubChild(ctx context.Context, in io.Reader, out io.Writer, lg *slog.Logger) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	enc := json.NewEncoder(out)
	if !sc.Scan() {
		return fmt.Errorf("hub child: no config: %v", sc.Err())
	}
	var first hubChildMsg
	if err := json.Unmarshal(sc.Bytes(), &first); err != nil || first.Config == nil {
		return fmt.Errorf("hub child: bad config line: %v", err)
	}
	if first.CPUProfile != "" {
		stop, err := StartCPUProfile(first.CPUProfile)
		if err != nil {
			return fmt.Errorf("hub child: %w", err)
		}
		defer stop()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(rctx, *first.Config, lg, func(s server.Started) { started <- s }) }()
	select {
	case s := <-started:
		if err := enc.Encode(hubChildMsg{Addr: s.Addr, HubURL: s.HubURL}); err != nil {
			return fmt.Errorf("hub child: %w", err)
		}
	case err := <-done:
		_ = enc.Encode(hubChildMsg{Err: fmt.Sprintf("start hub: %v", err)})
		return fmt.Errorf("hub child: start hub: %w", err)
	}
	for sc.Scan() {
		var c hubChildMsg
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("hub child: bad command: %w", err)
		}
		r := hubChildMsg{Err: "unknown op " + c.Op}
		switch c.Op {
		case "settle":
			runtime.GC()
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r = hubChildMsg{HeapStack: ms.HeapInuse + ms.StackInuse, Goroutines: runtime.NumGoroutine()}
		case "profile":
			r = hubChildMsg{}
			if err := profileFor(ctx, c.Path, time.Duration(c.Ms)*time.Millisecond); err != nil {
				r.Err = err.Error()
			}
		}
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("hub child: %w", err)
		}
	}
	cancel()
	if err := <-done; err != nil && rctx.Err() == nil {
		return fmt.Errorf("hub child: %w", err)
	}
	return nil
}

// profileFor writes a CPU profile of this process to path for d.
func profileFor(ctx context.Context, path string, d time.Duration) error {
	stop, err := StartCPUProfile(path)
	if err != nil {
		return err
	}
	defer stop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// hubChild is the parent's handle on a hub child process.
type hubChild struct {
	URL  string // hub URL, ends in "/"
	Addr string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	enc  *json.Encoder
	dir  string // data directory, removed by close
}

// startHubChild starts a hub child (cfg.HubCommand, or this executable
// with --internal-hub) running hubCfg and returns once it serves; dir is
// removed when the child is closed.
func startHubChild(ctx context.Context, cfg Config, hubCfg server.Config, dir string, lg *slog.Logger) (*hubChild, error) {
	argv := cfg.HubCommand
	if len(argv) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("hub child: find own executable: %w", err)
		}
		argv = []string{self, "--" + HubFlag}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), cfg.HubEnv...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("hub child: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("hub child: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("hub child: start %s: %w", argv[0], err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	h := &hubChild{cmd: cmd, in: in, out: sc, enc: json.NewEncoder(in), dir: dir}
	first := hubChildMsg{Config: &hubCfg}
	if cfg.HubCPUProfile != "" {
		_, port, _ := strings.Cut(hubCfg.Listen, ":")
		first.CPUProfile = cfg.HubCPUProfile + "." + port
	}
	r, err := h.call(ctx, first, hubCfg.StartupTimeout+time.Minute)
	if err != nil {
		h.close()
		return nil, err
	}
	h.URL, h.Addr = r.HubURL, r.Addr
	lg.Info("hub child serving", "pid", cmd.Process.Pid, "url", h.URL)
	return h, nil
}

// call sends m and waits, at most limit, for the answer.
func (h *hubChild) call(ctx context.Context, m hubChildMsg, limit time.Duration) (hubChildMsg, error) {
	if err := h.enc.Encode(m); err != nil {
		return hubChildMsg{}, fmt.Errorf("hub child: %w", err)
	}
	got := make(chan error, 1)
	var r hubChildMsg
	go func() {
		if !h.out.Scan() {
			got <- fmt.Errorf("hub child: ended: %v", h.out.Err())
			return
		}
		got <- json.Unmarshal(h.out.Bytes(), &r)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-got:
		if err == nil && r.Err != "" {
			err = fmt.Errorf("hub child: %s", r.Err)
		}
		return r, err
	case <-t.C:
		h.kill()
		return r, fmt.Errorf("hub child: no answer within %v; killed", limit)
	case <-ctx.Done():
		h.kill()
		return r, ctx.Err()
	}
}

// settle has the child collect garbage and return free memory to the OS,
// then reads its resident set.
func (h *hubChild) settle(ctx context.Context) (rss uint64, r hubChildMsg, err error) {
	if r, err = h.call(ctx, hubChildMsg{Op: "settle"}, time.Minute); err != nil {
		return 0, r, err
	}
	return procRSS(h.cmd.Process.Pid), r, nil
}

// cpu returns the child's user plus system CPU time so far.
func (h *hubChild) cpu() (time.Duration, error) { return procCPU(h.cmd.Process.Pid) }

func (h *hubChild) kill() {
	if h.cmd.Process != nil {
		_ = h.cmd.Process.Kill()
	}
}

// close stops the hub by closing the child's stdin, kills it if it
// lingers, and removes its data directory.
func (h *hubChild) close() {
	_ = h.in.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.kill()
		<-done
	}
	if h.dir != "" {
		_ = os.RemoveAll(h.dir)
	}
}
