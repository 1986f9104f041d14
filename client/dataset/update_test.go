package dataset

import (
	"context"
	"strings"
	"testing"
)

// A dataset imported once moves with the Source on each Update (a nightly
// `--no-follow` sync): new patches of the Change List are applied once,
// a newer Resource List's file is loaded again, and nothing changes when
// the Source did not.
func TestUpdate_CatchesAnImportedDatasetUp(t *testing.T) {
	ctx := context.Background()
	t.Run("change list", func(t *testing.T) {
		s := newTestSource(t)
		s.dataset("one", "First", testPatches[:2], nil, false)
		ds := Dataset{CapabilityList: s.url("/one/capabilitylist.xml"), ChangeList: s.url("/one/changelist.xml")}
		dir := t.TempDir()
		im, err := Open(Config{Dir: dir, Dataset: ds})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Update(ctx); err != nil { // the first Update imports
			t.Fatal(err)
		}
		if n := im.State().Patches; n != 2 {
			t.Fatalf("first update applied %d patches, want 2", n)
		}
		im.Close()

		s.dataset("one", "First", testPatches, nil, false) // the Source moved on
		im, err = Open(Config{Dir: dir, Dataset: ds})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		if err := im.Import(ctx); err != nil || im.State().Patches != 2 {
			t.Fatalf("Import of an imported dataset: %v, %d patches: want it left to Update", err, im.State().Patches)
		}
		if err := im.Update(ctx); err != nil {
			t.Fatal(err)
		}
		if got := exportString(t, im); got != testFinal || im.State().Patches != 3 {
			t.Fatalf("after the update (%d patches):\n%s\nwant\n%s", im.State().Patches, got, testFinal)
		}
		if err := im.Update(ctx); err != nil || im.State().Patches != 3 {
			t.Fatalf("an update with nothing new: %v, %d patches", err, im.State().Patches)
		}
	})
	t.Run("resource list", func(t *testing.T) {
		s := newTestSource(t)
		first := "<http://x/other> <http://x/p> \"o\" .\n"
		s.dataset("r", "R", nil, []string{first}, false)
		ds := Dataset{CapabilityList: s.url("/r/capabilitylist.xml"), ResourceList: s.url("/r/resourcelist.xml")}
		im, err := Open(Config{Dir: t.TempDir(), Dataset: ds})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		if err := im.Update(ctx); err != nil || exportString(t, im) != first {
			t.Fatalf("first update: %v", err)
		}
		s.dataset("r", "R", nil, []string{testFinal}, false)
		list := s.files["/r/resourcelist.xml"]
		list.body = strings.Replace(list.body, `at="2020-01-02T00:00:00Z"`, `at="2020-01-03T00:00:00Z"`, 1)
		s.files["/r/resourcelist.xml"] = list
		if err := im.Update(ctx); err != nil {
			t.Fatal(err)
		}
		if got := exportString(t, im); got != testFinal {
			t.Fatalf("after the Source's new Resource List:\n%s", got)
		}
	})
}
