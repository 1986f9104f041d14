package edge_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/testproc"
)

var longCut = flag.Duration("edge.longcut", 60*time.Second, "how long TestEdge_CatchesUpAsTheOriginReturns cuts the link and keeps the origin down")

// An edge delivers again within 5 s of its origin answering again (issue
// 45): after its leaf link was cut for a minute, and after the origin was
// killed and down for as long (long enough for the NATS server's mirror
// to have a request in flight and a retry backoff, which the stand-in
// answers). The times are measured from what the test observes: the link
// restored, the origin's /readyz answering 200. Then the edge is killed
// with kill -9 under load and started again: its subscriber ends with
// every acknowledged notification, in order, at the origin's sequences.
func TestEdge_CatchesUpAsTheOriginReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps a link cut and an origin down for a minute each")
	}
	origin, leaf := originWithLeaf(t, writeChannels(t, "chA", topicA))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p)
	edge.awaitReadyz(200, "ready", 60*time.Second)
	r := newReceiver(t)
	r.subscribe(t, edge.hubProc, topicA)
	acked := map[int]uint64{}
	publish := func(n int) { acked[n] = publishTo(t, origin.hubProc, topicA, n) }
	publish(1)
	awaitDelivered(t, r, 1, acked[1], "before the outages")

	p.Cut()
	edge.awaitReadyz(503, "stale", 60*time.Second)
	time.Sleep(*longCut) // the outage itself, not a synchronisation
	publish(2)
	restored := time.Now()
	p.Restore()
	awaitDelivered(t, r, 2, acked[2], "after the cut")
	afterCut := time.Since(restored)

	origin.proc.Kill()
	edge.awaitReadyz(503, "stale", 60*time.Second)
	time.Sleep(*longCut)
	origin.proc.Restart(t)
	origin.awaitReadyz(200, "ready", 90*time.Second)
	answering := time.Now()
	publish(3)
	awaitDelivered(t, r, 3, acked[3], "after the origin's restart")
	afterRestart := time.Since(answering)
	t.Logf("deliveries at the edge resumed %v after a %v cut was restored, %v after the origin, down for %v, answered again",
		afterCut.Round(time.Millisecond), *longCut, afterRestart.Round(time.Millisecond), *longCut)
	if afterCut > 5*time.Second || afterRestart > 5*time.Second {
		t.Errorf("deliveries resumed %v after the cut and %v after the origin's restart; want within 5 s", afterCut, afterRestart)
	}

	// kill -9 of the edge under load
	ctx, stop := context.WithCancel(context.Background())
	loaded := make(chan map[int]uint64, 1)
	go func() {
		got := map[int]uint64{}
		for n := 4; ctx.Err() == nil; n++ {
			for ctx.Err() == nil {
				req, _ := http.NewRequest(http.MethodPost, origin.url, strings.NewReader(series.Notification(n)))
				req.Header.Set("Content-Type", "application/xml")
				req.Header.Set("Link", "<"+topicA+`>; rel="self", <`+origin.url+`>; rel="hub"`)
				resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
				if err == nil {
					var seq uint64
					_, serr := fmt.Sscan(resp.Header.Get("Rshub-Seq"), &seq)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK && serr == nil {
						got[n] = seq
						break
					}
				}
				time.Sleep(100 * time.Millisecond) // back off before publishing again
			}
			time.Sleep(20 * time.Millisecond) // the load's pace
		}
		loaded <- got
	}()
	time.Sleep(2 * time.Second) // load before the kill
	edge.proc.Kill()
	edge.proc.Restart(t)
	edge.awaitReadyz(200, "ready", 90*time.Second)
	time.Sleep(2 * time.Second) // load after the restart
	stop()
	for n, seq := range <-loaded {
		acked[n] = seq
	}
	testproc.WaitFor(t, 2*time.Minute, "every acknowledged notification at the edge's subscriber", func() (bool, string) {
		got := map[int]uint64{}
		for _, d := range r.firsts() {
			got[d.n] = d.seq
		}
		for n, seq := range acked {
			if got[n] != seq {
				return false, fmt.Sprintf("notification %d (sequence %d): got sequence %d", n, seq, got[n])
			}
		}
		return true, ""
	})
	firsts := r.firsts()
	for i := 1; i < len(firsts); i++ {
		if firsts[i].seq <= firsts[i-1].seq {
			t.Fatalf("out of order at the edge's subscriber: %v then %v", firsts[i-1], firsts[i])
		}
	}
	t.Logf("%d notifications acknowledged, all delivered at the edge in order across the edge's kill -9", len(acked))
}
