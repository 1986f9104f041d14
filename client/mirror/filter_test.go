package mirror_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
)

// checkMirrorUnder compares the mirror with the Source's files whose name
// starts with prefix.
func (s *source) checkMirrorUnder(t *testing.T, dir, prefix string) {
	t.Helper()
	if err := s.mirrorDiffUnder(dir, prefix); err != nil {
		t.Fatal(err)
	}
}

// mirrorDiffUnder says how the mirror differs from the Source's files whose
// name starts with prefix, or nil.
func (s *source) mirrorDiffUnder(dir, prefix string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string][]byte{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	want := 0
	for name, b := range s.files {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		want++
		if !bytes.Equal(got[name], b) {
			return fmt.Errorf("%s: mirror %q, Source %q", name, got[name], b)
		}
	}
	if len(got) != want {
		return fmt.Errorf("mirror has %d files, Source %d under %s: %v", len(got), want, prefix, keys(got))
	}
	return nil
}

// TestApply_FilteredMirrorEqualsTheSourceRestrictedToThePrefix gives a
// filtered mirror unfiltered notifications (as NATS does) with gaps; the
// gaps heal from the hub's Change Lists through the same filter, and the
// mirror ends equal to the Source restricted to the prefix. A state file
// made with the filter refuses another one.
func TestApply_FilteredMirrorEqualsTheSourceRestrictedToThePrefix(t *testing.T) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	dir := filepath.Join(t.TempDir(), "mirror")
	f := changefeed.Filter{Prefixes: []string{src.srv.URL + "/files/keep/"}}
	cfg := mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/", Filter: f}
	m, err := mirror.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ups []mirror.Update
	ups = append(ups, src.change(t, map[string][]byte{"keep/a": []byte("a1"), "drop/a": []byte("x1")}))
	ups = append(ups, src.change(t, map[string][]byte{"keep/b": []byte("b1"), "drop/b": []byte("y1")}))
	ups = append(ups, src.change(t, map[string][]byte{"drop/a": nil, "keep/a": []byte("a2")}))
	ups = append(ups, src.change(t, map[string][]byte{"drop/c": []byte("z1")})) // nothing under the prefix
	ups = append(ups, src.change(t, map[string][]byte{"keep/b": nil, "keep/c": []byte("c1")}))
	for _, i := range []int{1, 3, 4} {
		if err := m.Apply(ctx, ups[i]); err != nil {
			t.Fatal(err)
		}
	}
	src.checkMirrorUnder(t, dir, "keep/")
	if st := m.State(); !st.Until.Equal(ups[4].Until) || st.Filter == nil {
		t.Fatalf("state %+v", st)
	}

	cfg.Filter = changefeed.Filter{}
	if _, err := mirror.Open(cfg); err == nil || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("state made with a filter opened without it: %v", err)
	}
	cfg.Filter = f
	m2, err := mirror.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src.change(t, map[string][]byte{"keep/d": []byte("d1"), "drop/d": []byte("w1")})
	// the hub's Change Lists show an acknowledged notification once pull
	// mode has read it: sync until they do
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := m2.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		diff := src.mirrorDiffUnder(dir, "keep/")
		if diff == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirror did not heal from the hub's Change Lists within 10s: %v", diff)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}
