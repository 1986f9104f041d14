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

// A Source that closes its open Change List into its archive between a
// poll's read of the archive and its read of the open list: the open list
// is read before the archive, so the next poll finds the closed list in the
// archive and publishes its changes before the new open list's, with no gap. Before, the changes of the closed list were
// lost without a gap: the new open list was published first, and the
// closed list ended before the anchor it set.
func TestFollower_ListClosedIntoTheArchiveDuringAPollIsRead(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	base := r.srv.URL
	r.src.set("/caps.xml", rsHead+`<rs:md capability="capabilitylist"/><url><loc>`+base+`/cl.xml</loc><rs:md capability="changelist"/></url><url><loc>`+base+`/arch.xml</loc><rs:md capability="changelist-archive"/></url></urlset>`)
	r.src.set("/arch.xml", archived(base))
	r.src.set("/cl.xml", cl(t0, ""))
	f := newFollower(r.e, hub.Channel{Name: "c", Follow: base + "/caps.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.hub.published(); got != "" {
		t.Fatalf("an empty Source published %q", got)
	}

	// the next read of the archive is the last before the rotation
	var rotated atomic.Bool
	r.src.mu.Lock()
	r.src.served = func(path string) {
		if path == "/arch.xml" && rotated.CompareAndSwap(false, true) {
			r.src.set("/1.xml", cl(t0, t3, "a@"+t1, "b@"+t2, "c@"+t3))
			r.src.set("/arch.xml", archived(base, [3]string{"/1.xml", t0, t3}))
			r.src.set("/cl.xml", cl(t3, "", "d@"+t4))
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
	r := newRig(t)
	ctx := context.Background()
	base := r.srv.URL
	r.src.set("/caps.xml", rsHead+`<rs:md capability="capabilitylist"/><url><loc>`+base+`/cl.xml</loc><rs:md capability="changelist"/></url><url><loc>`+base+`/arch.xml</loc><rs:md capability="changelist-archive"/></url></urlset>`)
	r.src.set("/arch.xml", archived(base))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	f := newFollower(r.e, hub.Channel{Name: "c", Follow: base + "/caps.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.hub.published(); got != "a" {
		t.Fatalf("published %q, want a", got)
	}

	// the Source closes its list into the archive right after the next
	// read of the archive, in the second of its last change
	var rotated atomic.Bool
	r.src.mu.Lock()
	r.src.served = func(path string) {
		if path == "/arch.xml" && rotated.CompareAndSwap(false, true) {
			r.src.set("/1.xml", cl(t0, t1, "a@"+t1, "b@"+t1, "c@"+t1))
			r.src.set("/arch.xml", archived(base, [3]string{"/1.xml", t0, t1}))
			r.src.set("/cl.xml", cl(t1, "", "d@"+t1))
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
	if got, want := r.hub.published(), "a b c d"; got != want {
		t.Errorf("published %q, want %q", got, want)
	}
	if len(r.hub.gaps) != 0 {
		t.Errorf("gaps %+v, want none", r.hub.gaps)
	}
}
