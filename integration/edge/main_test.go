package edge_test

import (
	"testing"

	"github.com/rshub/rshub/internal/testproc"
)

// bins holds the binaries built once by TestMain: the hub and, for the
// origin cluster, nats-server.
var bins struct{ hub, natsServer string }

func TestMain(m *testing.M) {
	testproc.Main(m, testproc.Binary{Out: &bins.hub, Name: "hub", Pkg: "./cmd/hub"},
		testproc.Binary{Out: &bins.natsServer, Name: "nats-server", Pkg: "github.com/nats-io/nats-server/v2"})
}
