package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ),
// 100 per second on every Linux architecture Go supports.
const clockTick = time.Second / 100

// procCPU returns the user plus system CPU time process pid has used, with
// the 10 ms resolution of /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces; fields count from the
	// closing parenthesis: state is field 3, utime 14 and stime 15.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu time of %d: unexpected stat %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu time of %d: unexpected stat %q", pid, s)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu time of %d: unexpected stat %q", pid, s)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
