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

// A mirror made with one base URL refuses another (its files would land at
// other paths beside the first ones: "127.0.0.1_8070/files/new.txt" beside
// "new.txt"), naming both; a state file that recorded none takes any.
func TestOpen_AnotherBaseURLRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mirror")
	state := dir + ".rshub-state.json"
	base := "http://127.0.0.1:8070/files/"
	cfg := mirror.Config{Dir: dir, Hub: "http://127.0.0.1:1/", Topic: "http://127.0.0.1:1/topics/demo", BaseURL: base}
	if err := mirror.SaveState(state, mirror.State{Topic: cfg.Topic, Hub: cfg.Hub, Baselined: true, BaseURL: &base}); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.BaseURL = ""
	if _, err := mirror.Open(other); err == nil || !strings.Contains(err.Error(), base) || !strings.Contains(err.Error(), "none (paths host/path)") {
		t.Fatalf("Open without the base URL the mirror was made with: %v, want a refusal naming both", err)
	}
	if _, err := mirror.Open(cfg); err != nil {
		t.Fatalf("Open with the same base URL: %v", err)
	}
	if err := mirror.SaveState(state, mirror.State{Topic: cfg.Topic, Hub: cfg.Hub, Baselined: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Open(other); err != nil {
		t.Fatalf("Open of a state file that recorded no base URL: %v", err)
	}
}
