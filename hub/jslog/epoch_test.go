package jslog_test

import (
	"math"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// TestEpoch_SurvivesRestartsAndChangesWithANewStream checks the log's
// identity: set when the stream is created, carried by every record read,
// the same after the server restarts on its data directory, and different
// for the stream created again after a delete and for another data
// directory.
func TestEpoch_SurvivesRestartsAndChangesWithANewStream(t *testing.T) {
	dir := t.TempDir()
	start := func() *embednats.Server {
		srv, err := embednats.Start(embednats.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := start()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	l := openLog(t, nc, jslog.Config{})
	epoch := l.Epoch()
	if !wire.ValidEpoch(epoch) {
		t.Fatalf("Epoch = %q", epoch)
	}
	seq := mustAppend(t, l, record("a", 1))
	if rec, err := l.Next(ctxT(t), "", seq); err != nil || rec.Epoch != epoch {
		t.Fatalf("Next = %+v, %v; want epoch %s", rec, err, epoch)
	}
	if err := l.Range(ctxT(t), "a", 1, math.MaxUint64, func(r wire.Record) error {
		if r.Epoch != epoch {
			t.Errorf("Range record epoch %q, want %s", r.Epoch, epoch)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if again := openLog(t, nc, jslog.Config{}); again.Epoch() != epoch {
		t.Fatalf("a second Log on the stream: epoch %s, want %s", again.Epoch(), epoch)
	}
	_ = l.Close()
	nc.Close()
	srv.Shutdown()

	srv = start()
	t.Cleanup(srv.Shutdown)
	nc, err = srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	restarted := openLog(t, nc, jslog.Config{})
	if restarted.Epoch() != epoch {
		t.Fatalf("after a restart: epoch %s, want %s", restarted.Epoch(), epoch)
	}
	_ = restarted.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(ctxT(t), wire.Stream); err != nil {
		t.Fatal(err)
	}
	// right after a deletion the server may still be removing the old
	// stream's files and refuse to create its store ("error creating store
	// for stream"); a hub retries its open, and so does this test
	var rebuilt *jslog.Log
	testenv.Eventually(t, 10*time.Second, func() bool {
		l, err := jslog.Open(ctxT(t), nc, jslog.Config{})
		if err != nil {
			t.Logf("open after the deletion: %v", err)
			return false
		}
		t.Cleanup(func() { _ = l.Close() })
		rebuilt = l
		return true
	}, "the log opened again after its stream was deleted")
	if rebuilt.Epoch() == epoch || !wire.ValidEpoch(rebuilt.Epoch()) {
		t.Fatalf("after the stream was deleted: epoch %q, want a new one (old %s)", rebuilt.Epoch(), epoch)
	}
	_, other := testenv.NATS(t)
	if fresh := openLog(t, other, jslog.Config{}); fresh.Epoch() == epoch {
		t.Fatalf("another data directory has the same epoch %s", epoch)
	}
}

// TestEpoch_StreamFromBeforeEpochsGetsOneEveryHubAgreesOn opens a log on
// a stream created without an epoch, as every stream was before: each Log
// derives the same epoch and stores it in the stream's metadata.
func TestEpoch_StreamFromBeforeEpochsGetsOneEveryHubAgreesOn(t *testing.T) {
	_, nc := testenv.NATS(t)
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: wire.Stream, Subjects: []string{wire.Subject(wire.SubjectPrefix, "")}}); err != nil {
		t.Fatal(err)
	}
	a, b := openLog(t, nc, jslog.Config{}), openLog(t, nc, jslog.Config{})
	if !wire.ValidEpoch(a.Epoch()) || a.Epoch() != b.Epoch() {
		t.Fatalf("epochs %q and %q; want one valid epoch", a.Epoch(), b.Epoch())
	}
	st, err := js.Stream(ctxT(t), wire.Stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().Config.Metadata[wire.MetadataEpoch]; got != a.Epoch() {
		t.Fatalf("stream metadata epoch %q, want %s", got, a.Epoch())
	}
}
