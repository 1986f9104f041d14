package server

import (
	"context"
	"os"

	"github.com/rshub/rshub/hub/follow"
)

// buildFollow makes the follower engine: it polls the Sources of followed
// channels through the hub's guarded client and publishes through the hub.
func (p *process) buildFollow(context.Context) error {
	owner := p.cfg.Owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = host + "@" + p.ln.Addr().String()
	}
	e, err := follow.New(follow.Config{
		Hub:       p.hub,
		Store:     p.store,
		Client:    p.client,
		MaxBody:   p.cfg.MaxBody,
		Reconcile: p.cfg.Reconcile,
		Owner:     owner,
		Observer:  p.metrics,
		Tracer:    p.tracing.Tracer("follow"),
		Logger:    p.logger.With("component", "follow"),
	})
	p.follow = e
	return err
}
