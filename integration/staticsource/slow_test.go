package staticsource

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trickleLists makes nginx send the Change Lists at 64 bytes a second
// after their first after bytes, while the file "slow" exists in the
// served directory.
func trickleLists(after int) string {
	return fmt.Sprintf(`    location ~ ^/changelist- {
      limit_rate_after %d;
      if (-f $document_root/slow) { set $limit_rate 64; }
    }`, after)
}

// A Source whose Change List trickles (nginx sending it at 64 bytes a
// second: seconds for a list, past the hub's fetch bound of a second at
// 100 ms polls), from its first byte (its header comes late) or after its
// first 400 (its body stops half way): each fetch is cut at the bound,
// /admin/follow says so (timeouts, fetchTimeout, lastError), and nothing
// of the half-read list is published; once the Source sends at full speed
// again, every change is published once, in order.
func TestStaticSource_ATricklingListIsCutAtTheFetchBoundAndNothingHalfReadIsPublished(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int
		says  string
	}{
		{"header late", 0, "no answer within 1s"},
		{"body half way", 400, "did not arrive whole within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trickle(t, tc.after, tc.says)
		})
	}
}

func trickle(t *testing.T, after int, says string) {
	dir := t.TempDir()
	src := newFileSource(t, dir, 1000, 7)
	srv := startNginx(t, dir, true, nil, trickleLists(after))
	src.start(srv.base)
	slow := filepath.Join(dir, "slow")
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		src.change()
	}
	h := startHub(t)
	rcv := newReceiver(t)
	h.follow(t, "slow", srv.base+"/index.xml", "100ms", rcv)
	waitFor(t, 60*time.Second, "the follower's fetches of the trickling list hit the bound twice", func() bool {
		return h.followStatus(t, "slow").Timeouts >= 2
	})
	st := h.followStatus(t, "slow")
	if st.FetchTimeout != "1s" || !strings.Contains(st.LastError, says) || !strings.Contains(st.LastError, "changelist-") {
		t.Errorf("follow status: fetchTimeout %q, lastError %q; want the bound and the cut list named", st.FetchTimeout, st.LastError)
	}
	if ids, _, _ := rcv.got(); len(ids) != 0 {
		t.Fatalf("%d entries published from a list never read whole", len(ids))
	}
	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	if code, b := h.do(t, http.MethodPost, "/admin/channels/slow/follow/poll", nil); code/100 != 2 {
		t.Fatalf("poll now: %d %s", code, b)
	}
	src.quiet()
	final := src.final()
	waitFor(t, 60*time.Second, "every change published once the Source sends at full speed", func() bool {
		ids, _, _ := rcv.got()
		return len(ids) >= len(final)
	})
	ids, errs, gaps := rcv.got()
	if msg := checkPublished(ids, final, src.wrote); msg != "" || len(errs) > 0 || gaps > 0 {
		t.Errorf("%s; receiver errors %v, %d gaps", msg, errs, gaps)
	}
}
