//go:build unix

package testenv

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// portLock takes the machine-wide claim on port p for this process: an
// exclusive, non-blocking flock on a file named after p in a directory
// of the user's temporary directory. It reports false when another
// process holds it. Where the directory cannot be made, it claims
// nothing and reports true (the claim in memory still holds). The
// returned file must stay open for the claim to last.
func portLock(p int) (io.Closer, bool) {
	dir := filepath.Join(os.TempDir(), "rshub-test-ports")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, true
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(p)), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, !errors.Is(err, syscall.EWOULDBLOCK)
	}
	return f, true
}
