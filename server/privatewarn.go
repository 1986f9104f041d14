package server

import (
	"context"
	"log/slog"

	"github.com/rshub/rshub/hub"
)

// warnUnreadable warns of the private channels the store keeps on a hub
// started without a subscriber key (it refuses new ones): no one can read
// them until it is started with one. A store that does not answer is left
// to the health checks.
func warnUnreadable(ctx context.Context, store hub.Store, logger *slog.Logger) {
	chs, err := store.Channels(ctx)
	if err != nil {
		return
	}
	var names []string
	for _, c := range chs {
		if c.Private {
			names = append(names, c.Name)
		}
	}
	if len(names) > 0 {
		logger.Warn("private channels no one can read: this hub verifies no subscriber token; start it with --subscriber-jwt-key or --subscriber-jwks-url",
			"channels", names)
	}
}
