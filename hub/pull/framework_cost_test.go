package pull_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/pull"
)

// A Sync that has nothing new to announce makes no pass over the
// channels: what it allocates does not grow with their number. The hub
// syncs once per append, so a pass per Sync is a pass per publish.
func TestFramework_SyncCostIndependentOfChannels(t *testing.T) {
	perSync := func(n int) float64 {
		names := channelNames(n)
		e := newEnv(t, pull.Config{}, names...)
		e.pull.EnableFramework(e.intake())
		ctx := context.Background()
		at := t0
		step := func() {
			until := at.Add(time.Minute)
			e.notify(names[0], at, until, entries(at, until, 2, 0))
			at = until
			if err := e.pull.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		step() // the first listing is gone through once
		const syncs = 20
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range syncs {
			step()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / syncs
	}
	const many = 5000
	few, lots := perSync(10), perSync(many)
	if grew := lots - few; grew > many*16 {
		t.Errorf("a Sync allocates %.0f B over %d channels, %.0f B over 10: %.0f B more per channel", lots, many, few, grew/(many-10))
	}
}
