package follow

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/hub"
)

// archived renders a Change List Archive naming closed lists, each
// {path, from, until}.
func archived(base string, lists ...[3]string) string {
	b := rsHead + `<rs:md capability="changelist-archive"/>`
	for _, l := range lists {
		b += `<url><loc>` + base + l[0] + `</loc><rs:md from="` + l[1] + `" until="` + l[2] + `"/></url>`
	}
	return b + `</urlset>`
}

// rotatedDuringAPoll follows a Source with an archive and an open Change
// List (open), polls once (want published: first), has the Source run
// rotate right after the next read of its archive, and polls twice more.
func rotatedDuringAPoll(t *testing.T, open, first string, rotate func(src *docSource, base string)) *rig {
	t.Helper()
	r := newRig(t)
	ctx := context.Background()
	base := r.srv.URL
	r.src.set("/caps.xml", rsHead+`<rs:md capability="capabilitylist"/><url><loc>`+base+`/cl.xml</loc><rs:md capability="changelist"/></url><url><loc>`+base+`/arch.xml</loc><rs:md capability="changelist-archive"/></url></urlset>`)
	r.src.set("/arch.xml", archived(base))
	r.src.set("/cl.xml", open)
	f := newFollower(r.e, hub.Channel{Name: "c", Follow: base + "/caps.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.hub.published(); got != first {
		t.Fatalf("published %q, want %q", got, first)
	}
	var rotated atomic.Bool
	r.src.mu.Lock()
	r.src.served = func(path string) {
		if path == "/arch.xml" && rotated.CompareAndSwap(false, true) {
			rotate(r.src, base)
		}
	}
	r.src.mu.Unlock()
	for range 2 {
		if err := f.poll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !rotated.Load() {
		t.Fatal("the Source never rotated: the test proves nothing")
	}
	return r
}

// A Source that closes its open Change List into its archive between a
// poll's read of the archive and its read of the open list: the open list
// is read before the archive, so the next poll finds the closed list in
// the archive and publishes its changes before the new open list's, with
// no gap. Before, the changes of the closed list were lost without a gap:
// the new open list was published first, and the closed list ended before
// the anchor it set.
func TestFollower_ListClosedIntoTheArchiveDuringAPollIsRead(t *testing.T) {
	r := rotatedDuringAPoll(t, cl(t0, ""), "", func(src *docSource, base string) {
		src.set("/1.xml", cl(t0, t3, "a@"+t1, "b@"+t2, "c@"+t3))
		src.set("/arch.xml", archived(base, [3]string{"/1.xml", t0, t3}))
		src.set("/cl.xml", cl(t3, "", "d@"+t4))
	})
	if got, want := r.hub.published(), "a b c d"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}
	if len(r.hub.gaps) != 0 {
		t.Errorf("gaps %+v, want none", r.hub.gaps)
	}
}

// As above, with every change and both lists' bounds in one second (a
// Source stamping seconds, several changes a second): no time tells that
// the open list read after the archive is a new one. The Source's current
// lists are read before its archive, so the closed list's tail still comes
// before the new open list's changes. Before, the poll read the archive
// first and published d before b and c.
func TestFollower_ListClosedIntoTheArchiveInTheSameSecondKeepsTheOrder(t *testing.T) {
	r := rotatedDuringAPoll(t, cl(t0, "", "a@"+t1), "a", func(src *docSource, base string) {
		src.set("/1.xml", cl(t0, t1, "a@"+t1, "b@"+t1, "c@"+t1))
		src.set("/arch.xml", archived(base, [3]string{"/1.xml", t0, t1}))
		src.set("/cl.xml", cl(t1, "", "d@"+t1))
	})
	if got, want := r.hub.published(), "a b c d"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}
	if len(r.hub.gaps) != 0 {
		t.Errorf("gaps %+v, want none", r.hub.gaps)
	}
}
