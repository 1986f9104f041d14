package natsconn

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// run dials, follows the connection until it is CLOSED, and dials again,
// until ctx ends.
func (c *Conn) run(ctx context.Context) {
	defer close(c.done)
	defer func() {
		if ctx.Err() != nil {
			c.finish()
		}
	}()
	attempt := 0
	for {
		if attempt > 0 {
			t := time.NewTimer(c.backoff(attempt))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		if ctx.Err() != nil {
			return
		}
		attempt++
		nc, err := c.dial(ctx)
		if err != nil {
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
			c.log.Warn("NATS dial failed", "attempt", attempt, "err", err)
			continue
		}
		up := time.Now()
		if !c.follow(ctx, nc) {
			return
		}
		if c.static != nil {
			c.log.Warn("NATS connection closed; it is not ours to replace", "err", c.Status().LastErr)
			return
		}
		if time.Since(up) >= c.cfg.MaxRedial {
			attempt = 1 // a connection that lived: the next dial waits the minimum
		}
		c.log.Warn("NATS connection closed; dialling a new one", "generation", c.Status().Generation, "err", c.Status().LastErr)
	}
}

func (c *Conn) dial(ctx context.Context) (*nats.Conn, error) {
	if c.static != nil {
		return c.static, nil
	}
	nc, err := c.cfg.Dial(ctx, nats.MaxReconnects(-1), nats.ReconnectWait(c.cfg.ReconnectWait), nats.ReconnectBufSize(-1))
	if err != nil {
		return nil, err
	}
	if nc == nil {
		return nil, fmt.Errorf("natsconn: dial returned no connection")
	}
	return nc, nil
}

// follow installs nc as the next generation and tracks its status until
// it is CLOSED (true) or ctx ends (false).
func (c *Conn) follow(ctx context.Context, nc *nats.Conn) bool {
	events := nc.StatusChanged(nats.CONNECTED, nats.RECONNECTING, nats.DISCONNECTED, nats.CLOSED)
	defer nc.RemoveStatusListener(events)
	c.mu.Lock()
	c.nc = nc
	c.gen++
	gen := c.gen
	c.notifyLocked()
	c.mu.Unlock()
	c.log.Info("NATS connection", "generation", gen, "server", cmp.Or(c.cfg.Where, nc.ConnectedUrlRedacted()))
	tick := time.NewTicker(statusPoll)
	defer tick.Stop()
	for {
		if c.sync(nc) == nats.CLOSED {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-events:
		case <-tick.C:
		}
	}
}

// sync brings the Conn's state in line with nc's status and returns it.
func (c *Conn) sync(nc *nats.Conn) nats.Status {
	st := nc.Status()
	up := st == nats.CONNECTED
	c.mu.Lock()
	defer c.mu.Unlock()
	if up == c.connected || c.closed {
		return st
	}
	c.connected, c.since = up, time.Now()
	if up {
		c.epoch, c.endEpoch = context.WithCancelCause(context.Background())
		c.log.Info("NATS connected", "generation", c.gen)
	} else {
		err := nc.LastError()
		if err == nil {
			err = fmt.Errorf("connection %s", st)
		}
		c.lastErr = err
		c.endEpoch(fmt.Errorf("%w: connection lost: %w", ErrDisconnected, err))
		c.log.Warn("NATS disconnected", "generation", c.gen, "status", st.String(), "err", err)
	}
	c.notifyLocked()
	return st
}
