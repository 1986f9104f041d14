package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// lockHolderEnv makes the test binary a process that holds a mirror
// directory's lock (TestLockHolder), as a first subscriber does.
const lockHolderEnv = "RSHUB_TEST_HOLD_LOCK"

// TestLockHolder is not a test: run as a child process with lockHolderEnv,
// it locks that directory, says so, and holds it until its standard input
// closes.
func TestLockHolder(t *testing.T) {
	dir := os.Getenv(lockHolderEnv)
	if dir == "" {
		t.Skip("a helper process of TestRun_SecondSubscriberOnOneDirectoryRefused")
	}
	if _, err := mirror.LockDir(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// A second subscriber on a --mirror (or --dataset) directory another
// process keeps is refused before it subscribes anything, naming that
// process, the flag and what to do; once the first has stopped, the
// directory is free.
func TestRun_SecondSubscriberOnOneDirectoryRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mirror")
	holder := exec.Command(os.Args[0], "-test.run=^TestLockHolder$")
	holder.Env = append(os.Environ(), lockHolderEnv+"="+dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = holder.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("the holder process: %q %v", line, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pid := "process " + strconv.Itoa(holder.Process.Pid)
	for _, args := range [][]string{
		{"--mirror", dir, "--hub", "http://127.0.0.1:1/", "--topic", "http://127.0.0.1:1/topics/demo"},
		{"--dataset", dir, "--source", "http://127.0.0.1:1/"},
	} {
		var out bytes.Buffer
		err := run(ctx, args, noEnv, &out, &out)
		if err == nil || !strings.Contains(err.Error(), args[0]+" "+dir+" is in use by "+pid) || !strings.Contains(err.Error(), "give this one another "+args[0]) {
			t.Errorf("%q beside a subscriber holding it: %v, want a refusal naming %s %s, %s and what to do", args, err, args[0], dir, pid)
		}
	}
	_ = stdin.Close()
	_ = holder.Wait()
	release, err := lockDir(settings{Mirror: dir})
	if err != nil {
		t.Fatalf("after the first subscriber stopped: %v", err)
	}
	release()
}

// A stopped subscriber ends its webhook subscription by default, so that
// the hub keeps none failing to reach it; --keep-subscription (or
// --unsubscribe-on-exit=false) keeps it.
func TestSettings_UnsubscribeOnExitByDefault(t *testing.T) {
	base := []string{"--mirror", "m", "--source", "http://s/"}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--keep-subscription"}, false},
		{[]string{"--unsubscribe-on-exit=false"}, false},
		{[]string{"--unsubscribe-on-exit", "--keep-subscription"}, false},
	} {
		s, err := parseSettings(append(append([]string(nil), base...), tc.args...), noEnv, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.unsubscribeOnExit(); got != tc.want {
			t.Errorf("%q: unsubscribe on exit %v, want %v", tc.args, got, tc.want)
		}
	}
}
