package jslog_test

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

var outage = flag.Duration("jslog.outage", 25*time.Second, "how long the origin stays down in TestMirror_ResumesAsTheOriginReturns")

// A mirror resumes as soon as its origin is back after an outage during
// which its server asked the origin for the mirror's consumer: the NATS
// server sees the mirror stalled 10 to 20 s after its last message and
// waits 30 s for the answer (standin.go), and a leaf link that returns
// while that request is in flight does not restart the mirror. The stand-in
// answered the request the origin could not, so the mirror's server had
// none in flight when the link returned and restarted the mirror then. The
// outage (25 s once the link is seen down) ends inside that wait: the
// request went by 20 s and is answered by nobody before 40 s, so without
// the stand-in the mirror resumes some 20 s late and the test fails. The
// resume is measured from the moment the origin's JetStream answers over
// the link again, not from a wall-clock origin: the check is that the
// mirror holds the records appended after the outage within 10 s of that.
func TestMirror_ResumesAsTheOriginReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out an outage of the origin")
	}
	t.Parallel() // waits out the outage; uses no CPU meanwhile
	originDir := t.TempDir()
	origin := startServer(t, embednats.Config{DataDir: originDir, Domain: "origin", LeafListen: "127.0.0.1:0", Access: hubAccess()})
	leaf := origin.LeafURL()
	src := openLog(t, connect(t, origin), jslog.Config{})
	first := mustAppend(t, src, record("a", 0))
	edge := startServer(t, embednats.Config{Domain: "edge", LeafRemote: leaf, Access: hubAccess()})
	enc := connect(t, edge)
	awaitOriginAPI(t, enc)
	m := openLog(t, enc, jslog.Config{Upstream: "origin"})
	waitLast(t, m, first)

	origin.Shutdown()
	testenv.Eventually(t, 30*time.Second, func() bool { st, err := m.Link(ctxT(t)); return err == nil && !st.Up }, "link down")
	time.Sleep(*outage) // the outage itself, not a synchronisation
	origin = startServer(t, embednats.Config{DataDir: originDir, Domain: "origin", LeafListen: strings.TrimPrefix(leaf, "nats-leaf://"), Access: hubAccess()})
	src = openLog(t, connect(t, origin), jslog.Config{})
	after := mustAppend(t, src, record("a", 1))
	answered := awaitOriginAPI(t, enc)
	testenv.Eventually(t, 60*time.Second, func() bool {
		_, last, err := m.Bounds(ctxT(t))
		return err == nil && last >= after
	}, "the mirror resumes")
	resumed := time.Since(answered)
	t.Logf("the mirror resumed %v after the origin answered over the link again (outage %v)", resumed.Round(time.Millisecond), *outage)
	// without the stand-in it resumes 20 s or more after (the rest of the
	// 30 s wait and a 10 s retry backoff); 10 s leaves a busy machine as
	// much room on the other side
	if resumed > 10*time.Second {
		t.Fatalf("the mirror resumed %v after the origin answered again; want within 10 s", resumed)
	}
}

// hubAccess is the users and permissions a hub gives its NATS server: the
// edge's leaf link may do only what embednats.LeafPermissions allows, the
// stand-in's look at the origin included.
func hubAccess() *embednats.Access {
	return &embednats.Access{Stream: wire.Stream, SubjectPrefix: wire.SubjectPrefix, LeafPassword: "leaf-pw"}
}

// awaitOriginAPI waits until the origin's JetStream answers over nc's
// leaf link (asked what the link may ask: the log's stream info) and
// returns when it did.
func awaitOriginAPI(t *testing.T, nc *nats.Conn) time.Time {
	t.Helper()
	up, err := jetstream.NewWithDomain(nc, "origin")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := up.Stream(ctx, wire.Stream)
		return err == nil
	}, "the origin's JetStream over the link")
	return time.Now()
}
