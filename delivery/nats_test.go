package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/internal/embednats"
)

// sharedNATS is the embedded NATS server with JetStream that every env of
// this package's tests lives on, each under names of its own (envNames).
// TestMain sets it before any test runs and nothing changes it after:
// starting a server per test cost each about 0.15 CPU-seconds under
// -race, 10 over the package. Tests that stop or restart NATS start
// their own server (testenv.RestartableNATS).
var sharedNATS *embednats.Server

// withSharedNATS starts sharedNATS on a temporary directory, runs run and
// stops the server again, returning run's exit code.
func withSharedNATS(run func() int) int {
	dir, err := os.MkdirTemp("", "rshub-delivery-nats-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "delivery tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// the server's warnings and errors go to the test output: a failed
	// stream create says its cause only there
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := embednats.Start(embednats.Config{DataDir: dir, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "delivery tests:", err)
		return 1
	}
	defer srv.Shutdown()
	if err := keepStreamsDir(srv); err != nil {
		fmt.Fprintln(os.Stderr, "delivery tests:", err)
		return 1
	}
	sharedNATS = srv
	return run()
}

// keepStreamsDir creates a file stream that lives as long as srv. The
// server removes an account's streams directory in the background once
// its last stream is deleted, and a stream created at that moment fails
// ("could not create storage directory … no such file or directory"):
// envs of tests running at once delete and create streams all the time.
func keepStreamsDir(srv *embednats.Server) error {
	nc, err := srv.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "KEEP_STREAMS_DIR", Subjects: []string{"keep-streams-dir"}, Storage: jetstream.FileStorage})
	return err
}

// envNames are the names of one env's log stream, log subjects and store
// buckets on sharedNATS: a random tag in each keeps envs of tests that
// run at once apart.
type envNames struct {
	tag           string
	stream        string // jslog.Config.Stream
	subjectPrefix string // jslog.Config.SubjectPrefix
	storePrefix   string // kvstore.Config.Prefix
}

func newEnvNames(t testing.TB) envNames {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tag := hex.EncodeToString(b)
	return envNames{tag: tag, stream: "LOG_" + tag, subjectPrefix: "notify." + tag, storePrefix: "store_" + tag}
}

// deleteStreams removes every stream on js whose name holds the tag: the
// env's log and its store's buckets, so that the server does not keep
// every finished test's streams.
func (n envNames) deleteStreams(ctx context.Context, js jetstream.JetStream) error {
	var names []string
	list := js.StreamNames(ctx)
	for name := range list.Name() {
		if strings.Contains(name, n.tag) {
			names = append(names, name)
		}
	}
	if err := list.Err(); err != nil {
		return fmt.Errorf("list streams: %w", err)
	}
	for _, name := range names {
		if err := js.DeleteStream(ctx, name); err != nil {
			return fmt.Errorf("delete stream %s: %w", name, err)
		}
	}
	return nil
}
