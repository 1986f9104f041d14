package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/rshub/rshub/internal/gcgov"
	"github.com/rshub/rshub/server"
)

// HubFlag is the hidden flag that turns the bench binary into a hub child
// process (RunHubChild on its stdin and stdout). It is not listed by
// --help.
const HubFlag = "internal-hub"

// hubChildMsg is one line between the parent and a hub child: the parent
// sends the server.Config first and then commands ("settle", "gcs",
// "profile", "profile-start", "profile-stop", "heap");
// the child answers the config once the hub serves and each command once
// done. "profile" profiles the CPU to Path for Ms; "profile-start" and
// "profile-stop" bracket a CPU profile to Path; "heap" writes a heap profile
// to Path.
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
	Retained   uint64 `json:"retained,omitempty"`  // settle: free heap kept mapped (HeapIdle − HeapReleased)
	GCMicros   int64  `json:"gcMicros,omitempty"`  // settle: the process's CPU time over its full collection, µs
	Goroutines int    `json:"goroutines,omitempty"`
	// PeriodicGC (settle) tells whether the runtime collects the child
	// every 2 minutes while it is idle: its hub's --gc is runtime, or GOGC
	// or GOMEMLIMIT is set.
	PeriodicGC bool `json:"periodicGC,omitempty"`
	// GCs ("gcs") is the number of collections the child has made.
	GCs uint32 `json:"gcs,omitempty"`
}

// RunHubChild is the hub child process: it reads a server.Config from in,
// runs that hub and answers on out once it serves, then answers "settle"
// commands (a full GC, and the free heap it keeps mapped, so that the
// parent can tell the settled RSS) until in ends or ctx does; then it
// stops the hub. The hub runs in its own process so that its CPU time and RSS are
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
	var stopProfile func() // a running "profile-start" profile
	defer func() {
		if stopProfile != nil {
			stopProfile()
		}
	}()
	// the runtime collects the hub every 2 minutes unless its --gc heap
	// (the default) stops that while it is idle
	_, _, chose := gcgov.OperatorChose(os.LookupEnv)
	periodic := first.Config.GC == server.GCRuntime || chose
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
			// no debug.FreeOSMemory: the heap it would release comes back
			// page fault by page fault, a cost a running hub never pays
			// and the measurements after a settle must not see
			cpu0 := selfCPU()
			runtime.GC()
			gc := selfCPU() - cpu0
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r = hubChildMsg{HeapStack: ms.HeapInuse + ms.StackInuse, Goroutines: runtime.NumGoroutine(), Retained: ms.HeapIdle - ms.HeapReleased, GCMicros: gc.Microseconds(), PeriodicGC: periodic}
		case "gcs":
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r = hubChildMsg{GCs: ms.NumGC}
		case "profile":
			r = hubChildMsg{}
			if err := profileFor(ctx, c.Path, time.Duration(c.Ms)*time.Millisecond); err != nil {
				r.Err = err.Error()
			}
		case "profile-start":
			r = hubChildMsg{}
			if stopProfile != nil {
				r.Err = "a profile is already running"
			} else if stop, err := StartCPUProfile(c.Path); err != nil {
				r.Err = err.Error()
			} else {
				stopProfile = stop
			}
		case "heap":
			r = hubChildMsg{}
			if err := writeHeapProfile(c.Path); err != nil {
				r.Err = err.Error()
			}
		case "profile-stop":
			r = hubChildMsg{}
			if stopProfile != nil {
				stopProfile()
				stopProfile = nil
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
	return pause(ctx, d)
}

// writeHeapProfile writes a heap profile of this process to path, after a
// collection so that it shows what is live.
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	return f.Close()
}

// hubChild is the parent's handle on a hub child process.
type hubChild struct {
	*childProc
	URL  string // hub URL, ends in "/"
	Addr string
	dir  string // data directory, removed by close
}

// startHubChild starts a hub child (cfg.HubCommand, or this executable
// with --internal-hub) running hubCfg and returns once it serves; dir is
// removed when the child is closed.
func startHubChild(ctx context.Context, cfg Config, hubCfg server.Config, dir string, lg *slog.Logger) (*hubChild, error) {
	p, err := startChild("hub child", cfg.HubCommand, HubFlag, cfg.HubEnv)
	if err != nil {
		return nil, err
	}
	h := &hubChild{childProc: p, dir: dir}
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
	lg.Info("hub child serving", "pid", h.pid(), "url", h.URL)
	return h, nil
}

// call sends m and waits, at most limit, for the answer.
func (h *hubChild) call(ctx context.Context, m hubChildMsg, limit time.Duration) (hubChildMsg, error) {
	var r hubChildMsg
	op := m.Op
	if op == "" {
		op = "start" // the first message carries the hub's configuration
	}
	err := h.childProc.call(ctx, op, m, &r, limit)
	if err == nil && r.Err != "" {
		err = fmt.Errorf("hub child: %s", r.Err)
	}
	return r, err
}

// selfCPU is this process's user plus system CPU time so far, 0 when it
// cannot be read.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// settle has the child collect garbage, then reads its resident set less
// the free heap the child keeps mapped for its next allocations: the RSS
// it would have after returning free memory to the OS, without doing it.
func (h *hubChild) settle(ctx context.Context) (rss uint64, r hubChildMsg, err error) {
	if r, err = h.call(ctx, hubChildMsg{Op: "settle"}, time.Minute); err != nil {
		return 0, r, err
	}
	rss = procRSS(h.pid())
	return rss - min(rss, r.Retained), r, nil
}

// cpu returns the child's user plus system CPU time so far.
func (h *hubChild) cpu() (time.Duration, error) { return procCPU(h.pid()) }

// close stops the hub by closing the child's stdin, kills it if it
// lingers, and removes its data directory.
func (h *hubChild) close() {
	h.childProc.close()
	if h.dir != "" {
		_ = os.RemoveAll(h.dir)
	}
}
