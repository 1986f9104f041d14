package mirror

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// ErrDirInUse is returned by LockDir when another process keeps the
// directory: two mirrors writing one directory (and one state file)
// interleave their files and their subscriptions.
var ErrDirInUse = errors.New("in use by another process")

// InUseError is LockDir's refusal: Holder ("process 1234", or "another
// process" when the lock file names none) keeps Dir.
type InUseError struct {
	Dir, Holder, LockFile string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("mirror: %s is held by %s (lock file %s)", e.Dir, e.Holder, e.LockFile)
}

// Unwrap makes errors.Is(err, ErrDirInUse) hold.
func (e *InUseError) Unwrap() error { return ErrDirInUse }

// LockSuffix names the lock file of a directory: <dir> + LockSuffix,
// beside the directory as the default state file is, so that the mirror
// itself holds only the Source's files.
const LockSuffix = ".rshub-lock"

// DirLock is a held lock on a directory (see LockDir).
type DirLock struct {
	fl   *flock.Flock
	Path string // the lock file
}

// LockDir takes an exclusive lock on dir for this process, or reports an
// *InUseError naming the process that holds it. The lock is the operating
// system's (flock) on a file beside dir holding the holder's process ID:
// it ends with the process however the process ends, so a killed mirror
// leaves nothing to clean. Release ends it sooner.
func LockDir(dir string) (*DirLock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mirror: lock %s: %w", dir, err)
	}
	abs = filepath.Clean(abs)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("mirror: lock %s: %w", dir, err)
	}
	path := abs + LockSuffix
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("mirror: lock %s: %w", path, err)
	}
	if !ok {
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = "process " + strconv.Itoa(pid)
			}
		}
		return nil, &InUseError{Dir: abs, Holder: holder, LockFile: path}
	}
	// the PID is for the message above; the lock is what counts
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		_ = fl.Unlock()
		return nil, fmt.Errorf("mirror: lock %s: %w", path, err)
	}
	return &DirLock{fl: fl, Path: path}, nil
}

// Release ends the lock; the lock file stays (removing it could let a
// third process lock a file the second is about to lock).
func (l *DirLock) Release() error {
	if err := l.fl.Unlock(); err != nil {
		return fmt.Errorf("mirror: unlock %s: %w", l.Path, err)
	}
	return nil
}
