package destination

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// syncedUnder waits until the mirror holds exactly the Source's files
// under dir/ and the subscriber's state reaches the Source's until.
func (w *world) syncedUnder(dir string, timeout time.Duration) {
	w.t.Helper()
	st := w.published()
	waitFor(w.t, timeout, "filtered mirror in step with the Source under "+dir, func() (bool, string) {
		ms, err := mirror.LoadState(w.statePath)
		if err != nil {
			return false, err.Error()
		}
		if !ms.Until.Equal(st.Until) {
			return false, fmt.Sprintf("subscriber until %s, Source until %s", ms.Until, st.Until)
		}
		for name := range files(w.mirrorDir) {
			if !strings.HasPrefix(name, dir+"/") {
				return false, "mirror holds " + name + ", outside the filter"
			}
		}
		if diff := compareDirs(filepath.Join(w.srcDir, dir), filepath.Join(w.mirrorDir, dir)); diff != "" {
			return false, diff
		}
		return true, ""
	})
}

// filterScenario runs cmd/subscriber with --filter-prefix for one of the
// Source's three directories: online, then offline over several
// notifications (healed from the hub's Change Lists through the filter),
// then online again; the mirror ends equal to the Source restricted to
// the prefix.
func filterScenario(t *testing.T, transport string) {
	w := newWorld(t, transport, "")
	w.subArgs = append(w.subArgs, "--filter-prefix", w.srcURL+"/files/d1/")
	w.edit(20)
	w.published()
	w.startSubscriber()
	w.syncedUnder("d1", 60*time.Second)

	w.sub.Stop(t)
	for range 8 {
		w.edit(8)
		w.published()
	}
	w.startSubscriber()
	w.syncedUnder("d1", 60*time.Second)
	for range 5 {
		w.edit(6)
		w.published()
	}
	w.syncedUnder("d1", 60*time.Second)
	if len(files(w.mirrorDir)) == 0 {
		t.Fatal("the filtered scenario mirrored nothing")
	}
	skipped := 0
	for _, e := range w.events() {
		if e.Kind == mirror.EventFile && !strings.HasPrefix(e.Path, "d1/") {
			t.Errorf("file event outside the filter: %+v", e)
		}
		if e.Kind == mirror.EventNotification && e.Entries == 0 {
			skipped++
		}
	}
	t.Logf("%s: %d notifications applied with no entry under the prefix (delivered empty, window kept)", transport, skipped)
}

// TestDestination_Filter_Webhook: the hub filters each delivery
// (rshub.filter.prefix); the subscriber applies the filter again.
func TestDestination_Filter_Webhook(t *testing.T) { filterScenario(t, "webhook") }

// TestDestination_Filter_NATS: subjects carry every entry; the consumer
// filters.
func TestDestination_Filter_NATS(t *testing.T) { filterScenario(t, "nats") }

// TestDestination_Filter_WebSocket: the session asks for the prefix; the
// subscriber applies the filter again.
func TestDestination_Filter_WebSocket(t *testing.T) { filterScenario(t, "websocket") }
