package edge_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/integration/series"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testproc"
)

var longCut = flag.Duration("edge.longcut", 0, "the least time the TestEdge_CatchesUp tests keep the link cut or the origin down (by default until the edge's mirror was refused once; for measurements)")

// standInSays is what /readyz quotes of the mirror's error once the
// stand-in answered the mirror's request for its consumer at the origin
// (hub/jslog/standin.go).
const standInSays = "is unreachable over the leaf link"

// minDials is the fewest dials of an outage: several reconnect intervals.
const minDials = 6

// An edge's reconnection to its origin does not back off beyond its
// reconnect interval however long the outage, and the edge catches up on
// the first link after it (issue 45). An outage (a cut link here, the
// origin killed in TestEdge_CatchesUpAsTheOriginReturns) lasts until the
// edge dialed minDials times (its link's proxy counts the dials) and its
// mirror's server asked the origin for the mirror's consumer and got the
// stand-in's refusal: the server retries that mirror only after 10 s × its
// failures (nats-server's calculateRetryBackoff, up to 2 minutes), unless
// a returning link restarts it, which it does when no request is in
// flight. Then:
//   - the edge dialed at least once per 2 × embednats.LeafReconnect of the
//     outage, less one (the interval, plus the NATS server's random addition
//     after a failed dial): a reconnection that backed off further fails;
//   - the notification published meanwhile reaches the edge's subscriber
//     over the first connection the proxy carried to the origin after the
//     outage: the catch-up waited for no second link.
//
// No limit here is a duration that a loaded machine stretches: a dial
// cycle would have to take twice the interval. The time to resume is
// logged (docs/edge.md).
func TestEdge_CatchesUpAfterALongCut(t *testing.T) {
	t.Parallel()
	c := newCatchUp(t)
	began, dials0 := time.Now(), c.p.dials.Load()
	c.p.Cut()
	c.publish(2)
	c.outage("link cut", began, dials0)
	carried0, restored := c.p.carried.Load(), time.Now()
	c.p.Restore()
	c.resumed("after the cut was restored", 2, carried0, restored)
}

// An edge catches up as its origin returns after it was killed and down,
// as after a cut (TestEdge_CatchesUpAfterALongCut, whose checks these are).
// Then the edge is killed with kill -9 under load and started again: its
// subscriber ends with every acknowledged notification, in order, at the
// origin's sequences.
func TestEdge_CatchesUpAsTheOriginReturns(t *testing.T) {
	t.Parallel()
	c := newCatchUp(t)
	origin, edge, r, acked := c.origin, c.edge, c.r, c.acked
	began, dials0 := time.Now(), c.p.dials.Load()
	origin.proc.Kill()
	c.outage("origin down", began, dials0)
	carried0 := c.p.carried.Load()
	origin.proc.Restart(t)
	origin.awaitReadyz(200, "ready", 90*time.Second)
	answering := time.Now()
	c.publish(3)
	c.resumed("after the origin answered again", 3, carried0, answering)

	// kill -9 of the edge under load
	ctx, stop := context.WithCancel(context.Background())
	loaded := make(chan map[int]uint64, 1)
	var published atomic.Int64
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
						published.Add(1)
						break
					}
				}
				time.Sleep(100 * time.Millisecond) // back off before publishing again
			}
			time.Sleep(20 * time.Millisecond) // the load's pace
		}
		loaded <- got
	}()
	underLoad := func(what string, more int64) {
		t.Helper()
		from := published.Load()
		testproc.WaitFor(t, 60*time.Second, what, func() (bool, string) {
			return published.Load() >= from+more, fmt.Sprintf("%d published", published.Load()-from)
		})
	}
	underLoad("load before the kill", 25)
	edge.proc.Kill()
	edge.proc.Restart(t)
	edge.awaitReadyz(200, "ready", 90*time.Second)
	underLoad("load after the restart", 25)
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

// catchUp is an origin with one channel, an edge linked to it through a
// proxy, and a subscriber at the edge that got notification 1.
type catchUp struct {
	t            *testing.T
	origin, edge *procHub
	p            *linkProxy
	r            *receiver
	acked        map[int]uint64 // the origin's sequence of each notification published
}

func newCatchUp(t *testing.T) *catchUp {
	origin, leaf := originWithLeaf(t, writeChannels(t, "chA", topicA))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	c := &catchUp{t: t, origin: origin, edge: edgeOf(t, origin, p), p: p, r: newReceiver(t), acked: map[int]uint64{}}
	c.edge.awaitReadyz(200, "ready", 60*time.Second)
	c.r.subscribe(t, c.edge.hubProc, topicA)
	c.publish(1)
	awaitDelivered(t, c.r, 1, c.acked[1], "before the outage")
	return c
}

// publish publishes notification n at the origin.
func (c *catchUp) publish(n int) { c.acked[n] = publishTo(c.t, c.origin.hubProc, topicA, n) }

// outage waits out an outage that began at began with dials0 dials, and
// checks the edge's dials meanwhile.
func (c *catchUp) outage(what string, began time.Time, dials0 int64) {
	c.t.Helper()
	testproc.WaitFor(c.t, 90*time.Second, what+": the edge dialing and its mirror refused by the stand-in", func() (bool, string) {
		code, body := c.edge.get("readyz")
		dials := c.p.dials.Load() - dials0
		return dials >= minDials && code == 503 && strings.Contains(body, standInSays) && time.Since(began) >= *longCut,
			fmt.Sprintf("%d dials; /readyz %d %s", dials, code, body)
	})
	lasted, dials := time.Since(began), c.p.dials.Load()-dials0
	c.t.Logf("%s: %d dials in %v", what, dials, lasted.Round(time.Millisecond))
	if want := int64(lasted/(2*embednats.LeafReconnect)) - 1; dials < want {
		c.t.Errorf("%s: the edge dialed its origin %d times in %v; want at least %d (one per 2 × %v, less one): its reconnection backs off",
			what, dials, lasted.Round(time.Millisecond), want, embednats.LeafReconnect)
	}
}

// resumed checks that notification n reached the subscriber over the
// first connection carried since carried0, and logs how long after from.
func (c *catchUp) resumed(what string, n int, carried0 int64, from time.Time) {
	c.t.Helper()
	awaitDelivered(c.t, c.r, n, c.acked[n], what)
	c.t.Logf("deliveries at the edge resumed %v %s", time.Since(from).Round(time.Millisecond), what)
	if links := c.p.carried.Load() - carried0; links != 1 {
		c.t.Errorf("%s: notification %d delivered after %d links to the origin; want the first", what, n, links)
	}
}
