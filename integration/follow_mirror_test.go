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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
	pullsource "github.com/rshub/rshub/examples/pullsource/source"
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

// startMirror runs a mirror of the channel over WebSocket, waits until it
// follows the channel live, and returns a function that waits until it
// equals the Source byte for byte.
func startMirror(t *testing.T, h followHub, src *followSource, topic, channel string) func(what string) {
	dir := t.TempDir()
	var live atomic.Bool
	m, err := mirror.Open(mirror.Config{Dir: filepath.Join(dir, "mirror"), StatePath: filepath.Join(dir, "state.json"),
		BaseURL: "http://" + src.addr + "/", Hub: h.url, Topic: topic, Events: func(e mirror.Event) {
			if e.Kind == mirror.EventInfo && strings.Contains(e.Message, "following live") {
				live.Store(true)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.RunWebSocket(ctx, mirror.WebSocketConfig{Hub: h.url, Channel: channel}) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, 10*time.Second, "the mirror follows the channel live", live.Load)
	return func(what string) {
		t.Helper()
		waitFor(t, 30*time.Second, what+": the mirror equals the Source byte for byte", func() bool {
			return sameFiles(mirrorFiles(t, filepath.Join(dir, "mirror")), src.src.Files())
		})
	}
}

// A destination mirroring a channel the hub fills by following a pull-only
// Source ends byte for byte equal to the Source, across rotations, a Source
// restart and Source errors.
func TestFollow_MirrorEndsByteForByteEqualToAPullOnlySource(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	src := startFollowSource(t, pullsource.Config{RotateEvery: 4})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	topic := followChannel(t, h, map[string]any{"name": "mirrored", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)

	inStep := startMirror(t, h, src, topic, "mirrored")
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
