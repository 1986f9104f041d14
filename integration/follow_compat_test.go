package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	datasetsource "github.com/rshub/rshub/examples/datasetsource/source"
	pullsource "github.com/rshub/rshub/examples/pullsource/source"
)

// The compatibility suite: one test per way real Sources publish their
// changes, each reproduced by examples/pullsource. The hub follows with no
// ping and its subscriber ends with exactly the Source's changes, in
// order, none twice.

// bursts makes the Source change in bursts of the given sizes, waiting
// each time until the subscriber holds the whole history (prior changes
// first). With a real clock, bursts share seconds: changes are written
// with the datetime of changes the hub already published.
func bursts(t *testing.T, src *followSource, rcv *followReceiver, prior []pullsource.Change, gaps int, sizes ...int) {
	t.Helper()
	for i, n := range sizes {
		src.src.Change(n)
		holdsExactly(t, append(prior[:len(prior):len(prior)], src.src.History()...), rcv, gaps, fmt.Sprintf("burst %d of %d changes", i, n))
	}
}

// followStatus is a channel's follow status in the admin API.
type followStatus struct {
	Polls      int
	Gaps       int
	Errors     int
	Leniencies []struct {
		Rule  string
		Count int
	}
}

func (h followHub) followStatus(t *testing.T, channel string) followStatus {
	t.Helper()
	_, b := h.do(t, http.MethodGet, "/admin/channels/"+channel, nil)
	var v struct {
		FollowStatus followStatus `json:"followStatus"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("channel view: %v %s", err, b)
	}
	return v.FollowStatus
}

// (a) The resync reference Source: one Change List, regenerated on every
// request with root until = the time of the request, changes timed by a
// real clock (many share a second).
func TestFollowCompat_OneChangeListRegeneratedPerRequestWithUntilNow(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeSimulator, Clock: time.Now})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	topic := followChannel(t, h, map[string]any{"name": "simulator", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
	inStep := startMirror(t, h, src, topic, "simulator")
	bursts(t, src, rcv, nil, 0, 12, 1, 3, 7, 1, 1, 20, 2)
	inStep("the simulator")
	if st := h.followStatus(t, "simulator"); st.Gaps != 0 || st.Errors != 0 {
		t.Errorf("follow status %+v: want no gap, no error", st)
	}
}

// (b) Dated Change Lists under a Change List Index, closed every three
// changes: several rotations between two polls or none.
func TestFollowCompat_DatedChangeListsUnderAnIndex(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeIndex, RotateEvery: 3, Clock: time.Now})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "index", "follow": "http://" + src.addr + "/capabilitylist.xml", "pollInterval": "20ms"}, rcv)
	bursts(t, src, rcv, nil, 0, 2, 1, 10, 3, 1, 8)
}

// (c) An open Change List whose closed predecessors move into a Change
// List Archive: the tail of a list closed between two polls is read from
// the archive.
func TestFollowCompat_ClosedListsMoveIntoAnArchive(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeArchive, RotateEvery: 2, Clock: time.Now})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "archive", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
	bursts(t, src, rcv, nil, 0, 1, 1, 7, 2, 1, 9)
	if st := h.followStatus(t, "archive"); st.Gaps != 0 {
		t.Errorf("follow status %+v: want no gap", st)
	}
}

// (g) A lenient Source: no root from, relative locations, entries out of
// order and entries without any time (never published). A strict channel
// refuses it and says why; a lenient one follows it and counts each rule.
func TestFollowCompat_LenientSource(t *testing.T) {
	src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeIndex, RotateEvery: 4,
		OmitFrom: true, RelativeLocs: true, Disorder: true, Timeless: true})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "strict", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, newFollowReceiver(t))
	followChannel(t, h, map[string]any{"name": "lenient", "follow": "http://" + src.addr + "/", "pollInterval": "20ms", "validation": "lenient"}, rcv)
	bursts(t, src, rcv, nil, 0, 5, 2, 9, 1)
	// the status in the store is at most a second behind the follower
	waitFor(t, 10*time.Second, "every leniency counted", func() bool {
		rules := map[string]bool{}
		for _, l := range h.followStatus(t, "lenient").Leniencies {
			rules[l.Rule] = l.Count > 0
		}
		for _, r := range []changefeed.Rule{changefeed.RuleRootAttributes, changefeed.RuleAbsoluteURI, changefeed.RuleOrder, changefeed.RuleChangeTime} {
			if !rules[string(r)] {
				return false
			}
		}
		return true
	})
	waitFor(t, 10*time.Second, "the strict channel refuses the Source", func() bool { return h.followStatus(t, "strict").Errors > 0 })
}

// A Source restarted without its history starts its lists again (at the
// same URLs) from a later time. The hub holds the changes of both lives;
// where the Source offers no archive nor index to read across the restart,
// the window between them is a gap the hub shows (follow status, the
// channel's continuity, rshub_gaps_total) and the notifications carry.
func TestFollowCompat_SourceRestartResetsItsHistory(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	for _, mode := range []struct {
		name string
		mode pullsource.Mode
	}{{"simulator", pullsource.ModeSimulator}, {"index", pullsource.ModeIndex}, {"archive", pullsource.ModeArchive}} {
		t.Run(mode.name, func(t *testing.T) {
			src := startFollowSource(t, pullsource.Config{Mode: mode.mode, RotateEvery: 3})
			h := startFollowHub(t)
			rcv := newFollowReceiver(t)
			followChannel(t, h, map[string]any{"name": "reset", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
			bursts(t, src, rcv, nil, 0, 4, 5)
			before := src.src.History()
			src.src.Reset()
			src.restart()
			bursts(t, src, rcv, before, 1, 2, 7)
			waitFor(t, 10*time.Second, "the follow status counts the one gap", func() bool { return h.followStatus(t, "reset").Gaps == 1 })
			resp, err := http.Get(h.url + "metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			m, _ := io.ReadAll(resp.Body)
			if !bytes.Contains(m, []byte(`rshub_gaps_total{channel="reset"} 1`)) {
				t.Errorf("metrics lack rshub_gaps_total for the channel")
			}
		})
	}
}

// A Source whose clock is a few minutes off (ahead: its changes are in the
// hub's future, within the hub's clock skew allowance; behind: its until
// is in the hub's past).
func TestFollowCompat_SourceClockMinutesOff(t *testing.T) {
	for _, off := range []time.Duration{3 * time.Minute, -4 * time.Minute} {
		t.Run(off.String(), func(t *testing.T) {
			src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeSimulator, Clock: time.Now, ClockOffset: off})
			h := startFollowHub(t)
			rcv := newFollowReceiver(t)
			followChannel(t, h, map[string]any{"name": "skewed", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
			bursts(t, src, rcv, nil, 0, 6, 1, 9)
		})
	}
}

// (d) A Resource List only and (e) a Resource List Index over sitemaps: no
// Change List. The hub diffs successive lists into created, updated and
// deleted notifications; the subscriber applying them ends with the
// Source's resources.
func TestFollowCompat_ResourceListOnly(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode pullsource.Mode
	}{{"resourcelist", pullsource.ModeResourceList}, {"index", pullsource.ModeResourceListIndex}} {
		t.Run(mode.name, func(t *testing.T) {
			src := startFollowSource(t, pullsource.Config{Mode: mode.mode, RotateEvery: 3})
			h := startFollowHub(t)
			rcv := newFollowReceiver(t)
			followChannel(t, h, map[string]any{"name": "rl", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
			waitFor(t, 10*time.Second, "the follower read its baseline", func() bool { return h.followStatus(t, "rl").Polls > 0 })
			for i, n := range []int{4, 9, 1, 13, 6} {
				src.src.Change(n)
				want := map[string]bool{}
				for loc := range src.src.Files() {
					want["http://"+src.addr+"/"+loc] = true
				}
				waitFor(t, 20*time.Second, fmt.Sprintf("round %d: the subscriber holds the Source's resources", i), func() bool {
					got, _ := rcv.got()
					have := map[string]bool{}
					for _, c := range got {
						if c.Change == changefeed.Deleted {
							delete(have, c.Loc)
						} else {
							have[c.Loc] = true
						}
					}
					return maps.Equal(have, want)
				})
			}
			if _, errs := rcv.got(); len(errs) > 0 || rcv.gapCount() != 0 {
				t.Fatalf("receiver: %v, %d gaps", errs, rcv.gapCount())
			}
		})
	}
}

// (f) The Timbuctoo-style dataset Source (examples/datasetsource), pull
// only: one Change List of every N-Quads patch, found from the Source's
// origin through its Source Description. The hub ends holding exactly the
// Source's patches, in order, none twice.
func TestFollowCompat_TimbuctooStyleDatasetSource(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + ln.Addr().String()
	src, err := datasetsource.New(t.Context(), datasetsource.Config{Dir: t.TempDir(), PublicURL: origin, QuadsPerEdit: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: src.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	want := func(ps []datasetsource.Patch) (out []pullsource.Change) {
		for _, p := range ps {
			out = append(out, pullsource.Change{Loc: src.PatchURL(p), Change: changefeed.Created, DateTime: p.Time})
		}
		return out
	}
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "dataset", "follow": origin + "/", "pollInterval": "20ms"}, rcv)
	for i, n := range []int{0, 1, 5, 2, 9, 1} {
		if _, err := src.Edit(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		holdsExactly(t, want(src.Patches()), rcv, 0, fmt.Sprintf("round %d: %d patches", i, len(src.Patches())))
	}
	waitFor(t, 10*time.Second, "the follow status shows polls", func() bool { return h.followStatus(t, "dataset").Polls > 0 })
	if st := h.followStatus(t, "dataset"); st.Errors != 0 || st.Gaps != 0 {
		t.Errorf("follow status %+v: want no error, no gap", st)
	}
	holdsExactly(t, want(src.Patches()), rcv, 0, "after more polls: no patch twice")
}
