package kvstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/testenv"
)

// linkedServers starts an origin's NATS server (domain "origin", a leaf
// node listener) and an edge's linked to it (domain "edge") with the
// hub's users and permissions (the leaf link's, embednats.LeafPermissions),
// and waits until the origin's JetStream answers over the link.
func linkedServers(t *testing.T, originDir string) (origin, edge *embednats.Server) {
	t.Helper()
	origin = startEmbedded(t, embednats.Config{DataDir: originDir, Domain: "origin", LeafListen: "127.0.0.1:0", Access: hubAccess()})
	edge = startEmbedded(t, embednats.Config{DataDir: t.TempDir(), Domain: "edge", LeafRemote: origin.LeafURL(), Access: hubAccess()})
	awaitOrigin(t, connectTo(t, edge))
	return origin, edge
}

// hubAccess is the users and permissions a hub gives its NATS server.
func hubAccess() *embednats.Access {
	return &embednats.Access{Stream: "RSHUB", SubjectPrefix: "rshub.notify", LeafPassword: "leaf-pw",
		Buckets: []string{kvstore.ChannelsStream("")}}
}

func startEmbedded(t *testing.T, cfg embednats.Config) *embednats.Server {
	t.Helper()
	s, err := embednats.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connectTo(t *testing.T, s *embednats.Server) *nats.Conn {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// awaitOrigin waits until the origin's JetStream answers over nc's leaf
// link (interest crosses the link a moment after it is up): asked what
// the link may ask, the channels bucket's stream info.
func awaitOrigin(t *testing.T, nc *nats.Conn) {
	t.Helper()
	up, err := jetstream.NewWithDomain(nc, "origin")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := up.Stream(ctx, kvstore.ChannelsStream(""))
		return err == nil || errors.Is(err, jetstream.ErrStreamNotFound)
	}, "the origin's JetStream over the link")
}

func openStore(t *testing.T, nc *nats.Conn, cfg kvstore.Config) *kvstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.Open(ctx, nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// awaitChannel waits until s answers topic's channel with want's name
// (want.Name "" waits until it has none).
func awaitChannel(t *testing.T, s *kvstore.Store, want hub.Channel, what string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() bool {
		ch, err := s.Channel(context.Background(), want.Topic)
		if want.Name == "" {
			return errors.Is(err, hub.ErrNotFound)
		}
		return err == nil && ch.Name == want.Name && ch.Trust == want.Trust
	}, "%s", what)
}

// An edge's store answers the origin's channels, mirrored over the leaf
// link: puts and deletes at the origin show at the edge, the edge's own
// writes are refused (they never reach the origin's bucket), and while the
// link is down the edge keeps answering what it mirrored.
func TestOriginChannels_TheEdgeHasTheOriginsChannels(t *testing.T) {
	ctx := context.Background()
	origin, edge := linkedServers(t, t.TempDir())
	ost := openStore(t, connectTo(t, origin), kvstore.Config{})
	a := hub.Channel{Topic: "https://example.org/a", Name: "a", Trust: hub.TrustOpen}
	if err := ost.PutChannel(ctx, a); err != nil {
		t.Fatal(err)
	}
	enc := connectTo(t, edge)
	// the edge's own bucket holds a channel of its own, which it must not answer
	own := openStore(t, enc, kvstore.Config{})
	if err := own.PutChannel(ctx, hub.Channel{Topic: "https://example.org/own", Name: "own"}); err != nil {
		t.Fatal(err)
	}
	es := openStore(t, enc, kvstore.Config{Origin: "origin"})
	awaitChannel(t, es, a, "the origin's channel at the edge")
	if _, err := es.Channel(ctx, "https://example.org/own"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("the edge answers its own bucket's channel: %v", err)
	}

	// a change at the origin shows at the edge, and the version moves
	ver, err := es.ChannelsVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.Trust = hub.TrustToken
	a.Token = "secret"
	if err := ost.PutChannel(ctx, a); err != nil {
		t.Fatal(err)
	}
	awaitChannel(t, es, a, "the origin's change at the edge")
	if v, _ := es.ChannelsVersion(ctx); v == ver {
		t.Fatalf("channels version did not move: %q", v)
	}

	// the edge never writes the origin's bucket, nor its own
	b := hub.Channel{Topic: "https://example.org/b", Name: "b", Trust: hub.TrustOpen}
	if err := es.PutChannel(ctx, b); !errors.Is(err, kvstore.ErrOriginChannels) {
		t.Fatalf("a channel put at the edge: %v, want ErrOriginChannels", err)
	}
	if err := es.DeleteChannel(ctx, a.Topic); !errors.Is(err, kvstore.ErrOriginChannels) {
		t.Fatalf("a channel delete at the edge: %v, want ErrOriginChannels", err)
	}
	if err := es.TouchChannels(ctx); err != nil {
		t.Fatalf("touch at the edge: %v", err)
	}
	if _, err := ost.Channel(ctx, b.Topic); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("a channel put at the edge is at the origin: %v", err)
	}
	if _, err := own.Channel(ctx, b.Topic); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("a channel put at the edge landed in the edge's own bucket: %v", err)
	}
	b.Name = "b2"
	if err := ost.PutChannel(ctx, b); err != nil {
		t.Fatal(err)
	}
	awaitChannel(t, es, b, "a second channel put at the origin")
	chs, err := es.Channels(ctx)
	if err != nil || len(chs) != 2 || chs[0].Name != "a" || chs[1].Name != "b2" {
		t.Fatalf("edge Channels = %+v, %v; want a and b2", chs, err)
	}

	// the origin goes away: the edge answers what it mirrored
	origin.Shutdown()
	for range 3 {
		if _, err := es.Channel(ctx, a.Topic); err != nil {
			t.Fatalf("with the origin down the edge lost its mirrored channel: %v", err)
		}
	}
}

// An origin that lost its data (its buckets created again, their
// revisions starting over) is mirrored anew once the edge rebuilds its
// mirror: the new bucket's channels, none of the old one's.
func TestOriginChannels_RebuildFollowsAnOriginCreatedAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	origin, edge := linkedServers(t, dir)
	ost := openStore(t, connectTo(t, origin), kvstore.Config{})
	old := hub.Channel{Topic: "https://example.org/old", Name: "old"}
	for _, ch := range []hub.Channel{old, {Topic: "https://example.org/x", Name: "x"}, {Topic: "https://example.org/y", Name: "y"}} {
		if err := ost.PutChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	enc := connectTo(t, edge)
	es := openStore(t, enc, kvstore.Config{Origin: "origin"})
	awaitChannel(t, es, old, "the old origin's channel")

	// the origin's bucket created again: its one channel's revision (1)
	// is below what the mirror holds
	if err := jsDelete(ctx, connectTo(t, origin), "KV_rshub_channels"); err != nil {
		t.Fatal(err)
	}
	ost = openStore(t, connectTo(t, origin), kvstore.Config{})
	fresh := hub.Channel{Topic: "https://example.org/new", Name: "new"}
	if err := ost.PutChannel(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if err := es.RebuildOriginChannels(ctx); err != nil {
		t.Fatal(err)
	}
	awaitChannel(t, es, fresh, "the new origin's channel after the rebuild")
	awaitChannel(t, es, hub.Channel{Topic: old.Topic}, "the old origin's channel gone after the rebuild")
}

// jsDelete deletes stream name on nc's JetStream.
func jsDelete(ctx context.Context, nc *nats.Conn, name string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return js.DeleteStream(ctx, name)
}
