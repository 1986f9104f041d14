package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/wire"
)

// connectNATS starts the embedded server or connects to --nats-url. The
// connection dials again whenever it ends up closed, so the log, the store
// and everything reading them heal by themselves.
func (p *process) connectNATS(ctx context.Context) error {
	nc, closeNATS, err := dialNATS(ctx, p.cfg, p.logger)
	if err != nil {
		return err
	}
	p.onClose(closeNATS)
	p.nc = nc
	return nil
}

// dialNATS returns a self-healing connection to --nats-url or to a NATS
// server it embeds, and how to close both.
func dialNATS(ctx context.Context, s Config, logger *slog.Logger) (*natsconn.Conn, func(), error) {
	opts := []nats.Option{nats.Name("rshub")}
	connLog := logger.With("component", "nats-conn")
	if s.NATSURL != "" {
		// readers of an external server may subscribe to _INBOX.> too
		opts = append(opts, embednats.HubInbox(s.isEdge()))
		c, err := natsconn.New(context.WithoutCancel(ctx), natsconn.Config{Dial: natsconn.URL(s.NATSURL, opts...), Logger: connLog})
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS %s: %w", wire.RedactURLs(s.NATSURL), err)
		}
		return c, c.Close, nil
	}
	pol, err := embednats.ParseSyncPolicy(s.Sync)
	if err != nil {
		return nil, nil, fmt.Errorf("--sync: %w", err)
	}
	access, err := s.natsAccess()
	if err != nil {
		return nil, nil, err
	}
	cfg := embednats.Config{DataDir: s.DataDir, Sync: pol, MaxPayload: int32(min(s.MaxBody+64<<10, 64<<20)), Logger: natsLogger(logger),
		Domain: s.natsDomain(), LeafRemote: s.UpstreamLeaf, Access: access}
	if s.LeafListen != "off" {
		cfg.LeafListen = s.LeafListen
	}
	if s.NATSListen != "off" {
		host, port, err := net.SplitHostPort(s.NATSListen)
		if err != nil {
			return nil, nil, fmt.Errorf("--nats-listen: %w", err)
		}
		cfg.Host = host
		if _, err := fmt.Sscan(port, &cfg.Port); err != nil || cfg.Port == 0 {
			cfg.Port = -1
		}
	}
	ns, err := embednats.Start(cfg)
	switch {
	case errors.Is(err, embednats.ErrDataDirInUse):
		return nil, nil, fmt.Errorf("--data-dir %s is in use, probably by another hub: give this hub its own --data-dir: %w", s.DataDir, err)
	case errors.Is(err, embednats.ErrPortInUse):
		return nil, nil, fmt.Errorf("%s is taken, probably by another hub: give this hub another address, or off: %w", s.takenListener(err), err)
	case err != nil:
		return nil, nil, err
	}
	dial := func(ctx context.Context, extra ...nats.Option) (*nats.Conn, error) {
		return ns.Dial(ctx, append(opts, extra...)...)
	}
	c, err := natsconn.New(context.WithoutCancel(ctx), natsconn.Config{Dial: dial, Logger: connLog, Where: "in-process (embedded server)"})
	if err != nil {
		ns.Shutdown()
		return nil, nil, err
	}
	if u := ns.ClientURL(); u != "" {
		logger.Info("embedded NATS", "url", u, "data_dir", s.DataDir, "sync", pol.String(), "readers", s.natsReaders())
	}
	if u := ns.LeafURL(); u != "" {
		logger.Info("embedded NATS takes edge hubs", "leaf_url", u, "domain", cfg.Domain)
	}
	return c, func() { c.Close(); ns.Shutdown() }, nil
}

// natsLogger shows the embedded NATS server's warnings and errors only,
// unless the hub logs at debug level.
func natsLogger(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l.With("component", "nats")
	}
	return slog.New(quieter{l.Handler(), slog.LevelWarn}).With("component", "nats")
}

// quieter raises a handler's minimum level (the embedded NATS server is
// chatty at info level).
type quieter struct {
	slog.Handler
	min slog.Level
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quieter) WithAttrs(a []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(a), q.min}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{q.Handler.WithGroup(name), q.min}
}
