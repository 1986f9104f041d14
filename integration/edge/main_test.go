package edge_test

import (
	"flag"
	"testing"

	"github.com/rshub/rshub/internal/testproc"
)

// bins holds the binaries built once by TestMain: the hub and, for the
// origin cluster, nats-server.
var bins struct{ hub, natsServer string }

func TestMain(m *testing.M) {
	// the parallel tests wait on processes and NATS timers far more than
	// they compute (a fifth of a core each): four at a time, unless
	// -parallel says otherwise
	if err := flag.Set("test.parallel", "4"); err != nil {
		panic(err)
	}
	testproc.Main(m, testproc.Binary{Out: &bins.hub, Name: "hub", Pkg: "./cmd/hub"},
		testproc.Binary{Out: &bins.natsServer, Name: "nats-server", Pkg: "github.com/nats-io/nats-server/v2"})
}
