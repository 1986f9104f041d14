package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/examples/pullsource"
)

// mirrorFiles reads a mirror directory: relative path to content, without
// the mirror's state file.
func mirrorFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// A destination mirroring a channel the hub fills by following a pull-only
// Source ends byte for byte equal to the Source, across rotations, a Source
// restart and Source errors.
func TestFollow_MirrorEndsByteForByteEqualToAPullOnlySource(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{RotateEvery: 4})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	topic := followChannel(t, h, map[string]any{"name": "mirrored", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)

	dir := t.TempDir()
	m, err := mirror.Open(mirror.Config{Dir: filepath.Join(dir, "mirror"), StatePath: filepath.Join(dir, "state.json"),
		BaseURL: "http://" + src.addr + "/", Hub: h.url, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.RunWebSocket(ctx, mirror.WebSocketConfig{Hub: h.url, Channel: "mirrored"}) }()
	t.Cleanup(func() { cancel(); <-done })

	inStep := func(what string) {
		t.Helper()
		waitFor(t, 30*time.Second, what+": the mirror equals the Source byte for byte", func() bool {
			return sameFiles(mirrorFiles(t, filepath.Join(dir, "mirror")), src.src.Files())
		})
	}
	src.src.Change(12) // creates res-0 … res-9, then updates
	inStep("first changes")
	for round := range 4 {
		src.src.Change(6 + round) // several rotations between polls, deletions among them
		inStep("round")
	}
	src.restart()
	src.src.Change(9)
	inStep("after a Source restart")
	failures := func() int {
		_, b := h.do(t, http.MethodGet, "/admin/channels/mirrored", nil)
		var v struct {
			FollowStatus struct{ Errors int } `json:"followStatus"`
		}
		_ = json.Unmarshal(b, &v)
		return v.FollowStatus.Errors
	}
	for _, fault := range []pullsource.Fault{pullsource.Fault5xx, pullsource.FaultGarbage} {
		before := failures()
		src.src.SetFault(fault)
		src.src.Change(5)
		waitFor(t, 10*time.Second, "the follower meets the fault", func() bool { return failures() > before })
		src.src.SetFault(pullsource.FaultNone)
		inStep("after a fault")
	}
	files := src.src.Files()
	if len(files) == 0 || len(files) == 10 {
		t.Fatalf("the Source holds %d resources: the history should have deleted some", len(files))
	}
	t.Logf("mirror in step with %d resources after %d changes", len(files), len(src.src.History()))
}
