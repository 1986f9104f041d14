package embednats

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// ErrDataDirInUse is returned by Start when another process holds the data
// directory: two servers writing one JetStream store corrupt it.
var ErrDataDirInUse = errors.New("data directory in use by another process")

// ErrPortInUse is returned by Start when the address to listen on is taken.
var ErrPortInUse = errors.New("address in use")

// LockFile is the file in the data directory that the running server holds
// an exclusive lock on; it contains the holder's process ID.
const LockFile = "rshub.lock"

// lockDataDir takes the data directory's lock, or reports who holds it.
// The lock is the operating system's (flock): it is released when the
// process ends, however it ends, so a killed hub leaves nothing to clean.
func lockDataDir(dir string) (*flock.Flock, error) {
	path := filepath.Join(dir, LockFile)
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("embednats: lock %s: %w", path, err)
	}
	if !ok {
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		return nil, fmt.Errorf("embednats: %s is held by %s: %w", dir, holder, ErrDataDirInUse)
	}
	// the PID is for the message above; the lock is what counts
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o640); err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("embednats: lock %s: %w", path, err)
	}
	return fl, nil
}

// checkPort reports ErrPortInUse when host:port cannot be listened on, so
// that a taken port is named at once instead of the server waiting
// ReadyTimeout for a listener that never comes.
func checkPort(host string, port int) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("embednats: listen on %s: %w (%w)", addr, ErrPortInUse, err)
	}
	return ln.Close()
}
