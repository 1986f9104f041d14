package embednats

import (
	"testing"

	"github.com/rshub/rshub/internal/docstest"
)

// docs/usage.md gives an external nats-server the embedded server's users
// exactly (the origin-cluster edge test runs nats-server with the same
// block).
func TestAuthorizationConf_DocsQuoteIt(t *testing.T) {
	docstest.Same(t, "usage.md", "#### The authorization block of an external nats-server",
		AuthorizationConf("RSHUB", "rshub.notify", "rshub", DefaultReadUser, []string{"KV_rshub_channels"}),
		"AuthorizationConf(\"RSHUB\", \"rshub.notify\", \"rshub\", \"reader\", []string{\"KV_rshub_channels\"})")
}
