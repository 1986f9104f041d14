package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

// ensureFiles makes sure this process (and the children it starts, which
// inherit the limit) may open need file descriptors, raising the limit
// when allowed (as root, even above the hard limit).
func ensureFiles(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read the open-file limit: %w", err)
	}
	if lim.Cur >= need {
		return nil
	}
	want := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		// Not root: take what the hard limit allows.
		if lim.Max > lim.Cur {
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim.Max, Max: lim.Max})
		}
		return fmt.Errorf("need %d open files, the limit is %d (hard %d) and cannot be raised (%v): run as root, raise it with ulimit -n, or lower --clients", need, lim.Cur, lim.Max, err)
	}
	return nil
}

// memory is a snapshot of this process's memory.
type memory struct {
	HeapStack uint64 // runtime HeapInuse + StackInuse after a full GC
	RSS       uint64 // VmRSS from /proc/self/status, 0 when unknown
}

// readMemory collects garbage twice (finalizers may free more) and reads
// the heap and stack in use and the resident set size.
func readMemory() memory {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{HeapStack: ms.HeapInuse + ms.StackInuse, RSS: vmRSS()}
}

func vmRSS() uint64 { return statusRSS("/proc/self/status") }

// procRSS is the VmRSS of process pid, 0 when unknown.
func procRSS(pid int) uint64 { return statusRSS(fmt.Sprintf("/proc/%d/status", pid)) }

// statusRSS reads VmRSS from a /proc/<pid>/status file, 0 when unknown.
func statusRSS(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// perConn returns the growth from before to after divided by n, negative
// growth counting as 0.
func perConn(before, after uint64, n int) float64 {
	if n <= 0 || after < before {
		return 0
	}
	return float64(after-before) / float64(n)
}

// StartCPUProfile writes a CPU profile of this process to path until the
// returned function is called.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
