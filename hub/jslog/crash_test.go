package jslog_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
)

// Environment of the crash child process.
const (
	crashDirEnv  = "RSHUB_JSLOG_CRASH_DIR"
	crashSyncEnv = "RSHUB_JSLOG_CRASH_SYNC"
)

const (
	crashAppenders = 4       // concurrent appenders in the child
	crashTotal     = 1 << 30 // more than the child reaches before it is killed
	crashAcks      = 2000    // acknowledgements the parent waits for before the kill
)

// crashBody is the deterministic body of the child's i-th record.
func crashBody(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("record %d;", i)), 40)
}

// TestCrash_AcknowledgedAppendsSurviveKill runs a child process that embeds
// NATS and appends without pause, SIGKILLs it after crashAcks
// acknowledgements, reopens the same directory and checks that every
// acknowledged record is there with its bytes.
func TestCrash_AcknowledgedAppendsSurviveKill(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("running as the crash child")
	}
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	t.Parallel() // beside the mirror tests, which mostly wait
	for _, policy := range []embednats.SyncPolicy{embednats.SyncDefault, embednats.SyncAlways} {
		t.Run("sync="+policy.String(), func(t *testing.T) { crashOnce(t, policy) })
	}
}

func crashOnce(t *testing.T, policy embednats.SyncPolicy) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSyncEnv+"="+policy.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[uint64]int{} // sequence -> record index
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ack" {
			continue
		}
		seq, err1 := strconv.ParseUint(f[1], 10, 64)
		i, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad child line %q", sc.Text())
		}
		acked[seq] = i
		if !killed && len(acked) >= crashAcks {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true // keep reading: lines already written are acknowledged too
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended after %d acks without being killed: %v", len(acked), err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed by SIGKILL: %v", err)
	}

	srv, err := embednats.Start(embednats.Config{DataDir: dir, Sync: policy})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, last, err := l.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for seq, i := range acked {
		rec, err := l.Next(ctx, "crash", seq)
		switch {
		case err != nil || rec.Seq != seq:
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged seq %d (record %d) lost: got %d, %v", seq, i, rec.Seq, err)
			}
		case !bytes.Equal(rec.Body, crashBody(i)) || rec.Key != "crash-"+strconv.Itoa(i):
			t.Errorf("seq %d: record %d damaged: key %q, %d body bytes", seq, i, rec.Key, len(rec.Body))
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records lost", missing, len(acked))
	}
	t.Logf("sync=%s: %d acknowledged records before SIGKILL, all present after restart (log holds %d)", policy, len(acked), last)
}

// TestCrashChild is the child process of the crash test; it does nothing
// unless started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only runs as the crash test's child")
	}
	policy, err := embednats.ParseSyncPolicy(os.Getenv(crashSyncEnv))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := embednats.Start(embednats.Config{DataDir: dir, Sync: policy})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // one unbuffered write per line
	var wg sync.WaitGroup
	for w := range crashAppenders {
		wg.Go(func() {
			for i := w; i < crashTotal; i += crashAppenders {
				rec := record("crash", i)
				rec.Body = crashBody(i)
				seq, _, err := l.Append(ctx, rec)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %d %d\n", seq, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
