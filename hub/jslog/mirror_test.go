package jslog_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testenv"
)

// startServer starts an embedded server with cfg (and a temporary data
// directory unless given), shut down when the test ends or by the caller.
func startServer(t *testing.T, cfg embednats.Config) *embednats.Server {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	s, err := embednats.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t *testing.T, s *embednats.Server) *nats.Conn {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// A mirror holds the origin's records at the origin's sequences with the
// origin's epoch, signals them on Changed, refuses appends, reports its
// link down (and since when) while the origin is gone, and catches up with
// what was appended meanwhile once the origin is back.
func TestMirror_FollowsTheOriginAcrossAnOutage(t *testing.T) {
	t.Parallel() // waits for the NATS server's mirror retry; uses no CPU meanwhile
	originDir := t.TempDir()
	origin := startServer(t, embednats.Config{DataDir: originDir, Domain: "origin", LeafListen: "127.0.0.1:0"})
	leaf := origin.LeafURL()
	src := openLog(t, connect(t, origin), jslog.Config{})
	var seqs []uint64
	for i := range 3 {
		seqs = append(seqs, mustAppend(t, src, record("a", i)))
	}

	edge := startServer(t, embednats.Config{Domain: "edge", LeafRemote: leaf})
	testenv.Eventually(t, 10*time.Second, func() bool { return edge.LeafNodes() == 1 }, "leaf link")
	enc := connect(t, edge)
	// the link is up before the origin's JetStream API is reachable over
	// it (interest crosses the link after it): until then a request has no
	// responders, as a hub opening its mirror at start retries
	upstream, err := jetstream.NewWithDomain(enc, "origin")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool { _, err := upstream.AccountInfo(ctxT(t)); return err == nil }, "the origin's JetStream reachable over the link")
	m := openLog(t, enc, jslog.Config{Upstream: "origin"})
	if m.Epoch() != src.Epoch() {
		t.Fatalf("mirror epoch %q, origin's %q", m.Epoch(), src.Epoch())
	}
	waitLast(t, m, seqs[2])
	for _, seq := range seqs {
		rec, err := m.Next(ctxT(t), "a", seq)
		if err != nil || rec.Seq != seq || rec.Epoch != src.Epoch() {
			t.Fatalf("mirror Next(%d) = seq %d epoch %q, %v", seq, rec.Seq, rec.Epoch, err)
		}
	}
	if _, _, err := m.Append(ctxT(t), record("a", 9)); !errors.Is(err, jslog.ErrMirror) {
		t.Fatalf("Append on a mirror: %v, want ErrMirror", err)
	}
	if _, _, err := m.AppendAfter(ctxT(t), record("a", 9), seqs[2]); !errors.Is(err, jslog.ErrMirror) {
		t.Fatalf("AppendAfter on a mirror: %v, want ErrMirror", err)
	}
	changed := m.Changed()
	live := mustAppend(t, src, record("a", 3))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the mirror's Changed was not closed by an append at the origin")
	}
	waitLast(t, m, live)
	if st, err := m.Link(ctxT(t)); err != nil || !st.Up || st.Last != live {
		t.Fatalf("Link with the origin up = %+v, %v", st, err)
	}

	cut := time.Now()
	origin.Shutdown()
	var st jslog.LinkState
	testenv.Eventually(t, 10*time.Second, func() bool {
		var err error
		st, err = m.Link(ctxT(t))
		return err == nil && !st.Up
	}, "link reported down")
	if st.Since.After(cut.Add(time.Second)) || st.Since.Before(cut.Add(-jslog.StaleAfter)) {
		t.Fatalf("stale since %v, origin stopped at %v", st.Since, cut)
	}
	if rec, err := m.Next(ctxT(t), "a", live); err != nil || rec.Seq != live {
		t.Fatalf("the mirror does not serve what it holds with the link down: %v", err)
	}

	origin = startServer(t, embednats.Config{DataDir: originDir, Domain: "origin", LeafListen: strings.TrimPrefix(leaf, "nats-leaf://")})
	src = openLog(t, connect(t, origin), jslog.Config{})
	var more []uint64
	for i := range 3 {
		more = append(more, mustAppend(t, src, record("b", i)))
	}
	begun := time.Now()
	waitLast(t, m, more[2])
	t.Logf("caught up in %v", time.Since(begun))
	for _, seq := range more {
		if rec, err := m.Next(ctxT(t), "b", seq); err != nil || rec.Seq != seq {
			t.Fatalf("after the outage, mirror Next(%d) = %d, %v", seq, rec.Seq, err)
		}
	}
	testenv.Eventually(t, 10*time.Second, func() bool { st, err := m.Link(ctxT(t)); return err == nil && st.Up }, "link up again")
}

// A data directory that holds a hub's own log is not turned into a mirror.
func TestMirror_RefusesAnOrdinaryLog(t *testing.T) {
	s := startServer(t, embednats.Config{Domain: "edge"})
	nc := connect(t, s)
	_ = openLog(t, nc, jslog.Config{})
	_, err := jslog.Open(ctxT(t), nc, jslog.Config{Upstream: "origin"})
	if err == nil || !strings.Contains(err.Error(), "not a mirror") {
		t.Fatalf("Open as a mirror over an ordinary log: %v", err)
	}
}

// waitLast waits until l holds seq. A mirror catches up after a short
// outage when its server next sees it stalled, 10 to 20 s after its last
// message, so the wait leaves room for that on a busy machine.
func waitLast(t *testing.T, l *jslog.Log, seq uint64) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func() bool {
		_, last, err := l.Bounds(ctxT(t))
		return err == nil && last >= seq
	}, "log reaches sequence %d", seq)
}
