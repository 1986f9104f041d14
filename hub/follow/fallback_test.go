package follow

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

// recObserver records the engine's events.
type recObserver struct {
	mu         sync.Mutex
	polls      map[string]int // by outcome
	leniencies map[string]int // by rule
}

func (o *recObserver) Polled(_, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.polls[outcome]++
}
func (o *recObserver) Fetched(string, int) {}
func (o *recObserver) Leniency(_, rule string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leniencies[rule]++
}

// fallbackRig is a Source whose Capability List names a Change List and a
// Resource List, with a hub whose log and observer the test reads.
func fallbackRig(t *testing.T, validation string) (*rig, *follower, *recObserver, *testenv.Buffer) {
	r := newRig(t)
	obs := &recObserver{polls: map[string]int{}, leniencies: map[string]int{}}
	logs := &testenv.Buffer{}
	r.e.cfg.Observer = obs
	r.e.logger = slog.New(slog.NewTextHandler(logs, nil))
	r.e.cfg.Dir = t.TempDir()
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}, [2]string{"/rl.xml", "resourcelist"}))
	r.src.set("/rl.xml", resourceList(t1, "a@"+t0))
	f := newFollower(r.e, hub.Channel{Name: "c", Follow: r.srv.URL + "/cap.xml", PollInterval: "1s", Validation: validation})
	return r, f, obs, logs
}

var testTiming = Timing{Interval: time.Second, MaxBackoff: time.Minute, MaxWait: time.Minute}

// A strict channel whose Change List breaks a strict rule (here: no root
// from) keeps failing, and says why: the poll's error (lastError), the
// error outcome of the polls metric, a WARN line. It does not follow the
// Resource List instead: before, it did so silently, with no error.
func TestFollower_StrictChannelReportsABrokenChangeListAndDoesNotFallBack(t *testing.T) {
	r, f, obs, logs := fallbackRig(t, hub.ValidationStrict)
	r.src.set("/cl.xml", rsHead+`<rs:md capability="changelist"/><url><loc>http://s.example/x</loc><rs:md change="updated" datetime="`+t1+`"/></url></urlset>`)
	for range 2 {
		f.turn(context.Background(), testTiming)
	}
	st := f.status()
	if st.Errors != 2 || !strings.Contains(st.LastError, "/cl.xml") || !strings.Contains(st.LastError, "lenient") {
		t.Errorf("status: errors %d, lastError %q; want 2 errors naming the Change List and what would fall back", st.Errors, st.LastError)
	}
	if st.Plan.ResourceList != "" || st.Resources != 0 {
		t.Errorf("the strict channel follows the Resource List: plan %+v, %d resources", st.Plan, st.Resources)
	}
	if obs.polls["error"] != 2 {
		t.Errorf("polls metric %v, want 2 errors", obs.polls)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cl.xml") {
		t.Errorf("no WARN line naming the Change List:\n%s", logs)
	}
}

// A lenient channel whose Change List cannot be read at all (here: 404)
// follows the Resource List instead, and says so: a leniency
// (changelist-fallback) in the status and the leniencies metric, a WARN
// line; the poll succeeds.
func TestFollower_LenientChannelFallsBackToTheResourceListAndSaysSo(t *testing.T) {
	r, f, obs, logs := fallbackRig(t, hub.ValidationLenient)
	f.turn(context.Background(), testTiming)
	st := f.status()
	if st.Errors != 0 || st.Plan.ResourceList == "" || st.Resources != 1 {
		t.Fatalf("status: errors %d (%s), plan %+v, %d resources; want the Resource List followed", st.Errors, st.LastError, st.Plan, st.Resources)
	}
	found := false
	for _, l := range st.Leniencies {
		found = found || (l.Rule == RuleChangeListFallback && strings.Contains(l.Msg, "/cl.xml"))
	}
	if !found || obs.leniencies[RuleChangeListFallback] != 1 {
		t.Errorf("leniencies %+v, metric %v: want %s naming the Change List", st.Leniencies, obs.leniencies, RuleChangeListFallback)
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("no WARN line:\n%s", logs)
	}
	_ = r
}
