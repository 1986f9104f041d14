package pull_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

// BenchmarkGetFeed measures, in one run and on one hub, GET of a full
// closed Change List (50,000 entries), of the Atom archive document that
// mirrors it, of the open Change List and of the Atom subscription
// document (the open list's 1,000 entries), identity and gzip, each after
// a first GET that renders it into the cache (reported as first-get-ms).
func BenchmarkGetFeed(b *testing.B) {
	const size, perNote = 50000, 1000
	e := newEnv(b, pull.Config{Rotation: changefeed.Rotation{MaxEntries: size}}, "a")
	list := fullList(b, e, size, perNote)
	seq, _ := wire.ParseListFile(list[len(list)-len(wire.ListFile(0)):])
	docs := []struct{ name, url string }{
		{"changelist-closed", list},
		{"feed-archive", e.base + wire.FeedArchivePath("a", seq)},
		{"changelist-open", e.base + wire.ChangeListPath("a")},
		{"feed-subscription", e.base + wire.FeedPath("a")},
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, d := range docs {
		for _, enc := range []string{"identity", "gzip"} {
			b.Run(fmt.Sprintf("%s/%s", d.name, enc), func(b *testing.B) {
				start := time.Now()
				n := fetchAll(b, c, d.url, enc) // renders it on the first variant
				first := time.Since(start)
				b.SetBytes(n)
				b.ResetTimer()
				for b.Loop() {
					fetchAll(b, c, d.url, enc)
				}
				b.ReportMetric(float64(first.Microseconds())/1000, "first-get-ms")
			})
		}
	}
}
