package mirror_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rshub/rshub/client/mirror"
)

// A directory one mirror keeps is refused to a second, naming the process
// that holds it and the lock file; releasing it lets the next one in. The
// lock file sits beside the directory, never in it.
func TestLockDir_SecondHolderRefusedNamingTheFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mirror")
	first, err := mirror.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mirror.LockDir(dir + "/") // the same directory, spelled otherwise
	var iu *mirror.InUseError
	if !errors.As(err, &iu) || !errors.Is(err, mirror.ErrDirInUse) {
		t.Fatalf("a second lock: %v, want an *InUseError", err)
	}
	if want := "process " + strconv.Itoa(os.Getpid()); iu.Holder != want || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir+mirror.LockSuffix) {
		t.Fatalf("a second lock: %v (holder %q), want it to name %s and the lock file", err, iu.Holder, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the lock put %d files in the mirror directory", len(entries))
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := mirror.LockDir(dir)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	_ = again.Release()
}
