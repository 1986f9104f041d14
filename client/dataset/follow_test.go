package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// What the follower does with the mirror's events, without a hub: a
// fetched patch is applied once, a later version of a Resource List's
// dataset file replaces the dataset, and a patch that could not be fetched
// stops following and puts the position back to the last notification
// applied whole.
func TestOnMirrorEvent_AppliesPatchesReloadsFilesRewindsOnFailure(t *testing.T) {
	dir := t.TempDir()
	im, err := Open(Config{Dir: dir, Dataset: Dataset{CapabilityList: "http://x/cl.xml"}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	write := func(name, body string) {
		p := filepath.Join(dir, PatchDir, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pos := &position{until: t1, seq: 3}
	var stopped error
	stop := func(err error) { stopped = err }

	write("x/1.nqud", "+<http://x/a> <http://x/p> \"1\" .\n")
	for range 2 { // delivered twice
		im.onMirrorEvent(mirror.Event{Kind: mirror.EventFile, Change: "created", Loc: "http://x/1.nqud", Path: "x/1.nqud"}, pos, stop)
	}
	im.onMirrorEvent(mirror.Event{Kind: mirror.EventNotification, Until: t1.Add(time.Minute), Seq: 4}, pos, stop)
	if im.Len() != 1 || im.State().Patches != 1 || stopped != nil {
		t.Fatalf("after one patch delivered twice: %d quads, %d patches, %v", im.Len(), im.State().Patches, stopped)
	}
	if !pos.until.Equal(t1.Add(time.Minute)) || pos.seq != 4 {
		t.Fatalf("position %+v", pos)
	}

	im.st.Mode, im.st.DataSetFile = ModeResourceList, "http://x/data.ttl"
	write("x/data.ttl", "<http://x/b> <http://x/p> true .")
	im.onMirrorEvent(mirror.Event{Kind: mirror.EventFile, Change: "updated", Loc: "http://x/data.ttl", Path: "x/data.ttl"}, pos, stop)
	if im.Len() != 1 || exportString(t, im) != "<http://x/b> <http://x/p> \"true\"^^<http://www.w3.org/2001/XMLSchema#boolean> .\n" {
		t.Fatalf("the new dataset file was not loaded: %q", exportString(t, im))
	}

	statePath := filepath.Join(dir, FollowStateFile)
	if err := mirror.SaveState(statePath, mirror.State{Topic: "t", Until: t1.Add(time.Hour), Seq: 9}); err != nil {
		t.Fatal(err)
	}
	im.onMirrorEvent(mirror.Event{Kind: mirror.EventSkipped, Loc: "http://x/2.nqud", Message: "resource gone"}, pos, stop)
	im.onMirrorEvent(mirror.Event{Kind: mirror.EventNotification, Until: t1.Add(time.Hour), Seq: 9}, pos, stop)
	if stopped == nil || !pos.failed || !pos.until.Equal(t1.Add(time.Minute)) {
		t.Fatalf("a skipped patch: stop %v, position %+v", stopped, pos)
	}
	if err := rewind(statePath, pos); err != nil {
		t.Fatal(err)
	}
	st, _ := mirror.LoadState(statePath)
	if !st.Until.Equal(t1.Add(time.Minute)) || st.Seq != 4 || st.Topic != "t" {
		t.Fatalf("rewound state %+v", st)
	}

	im.st.Imported = true
	if err := im.Follow(context.Background(), FollowConfig{}); !errors.Is(err, ErrNoChannel) {
		t.Fatalf("following a dataset without a channel: %v", err)
	}
}
