package embednats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// SyncPolicy says when the JetStream file store forces writes to disk.
type SyncPolicy int

const (
	// SyncDefault flushes every acknowledged write to the operating system
	// and fsyncs on the server's default interval (two minutes):
	// acknowledged data survives a process kill, not a power loss.
	SyncDefault SyncPolicy = iota
	// SyncAlways fsyncs every write before it is acknowledged: acknowledged
	// data survives a power loss.
	SyncAlways
)

// String returns the policy's name as used in flags and benchmarks.
func (p SyncPolicy) String() string {
	switch p {
	case SyncDefault:
		return "default"
	case SyncAlways:
		return "always"
	default:
		return fmt.Sprintf("SyncPolicy(%d)", int(p))
	}
}

// ParseSyncPolicy returns the policy named "default" or "always".
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	switch s {
	case "default", "":
		return SyncDefault, nil
	case "always":
		return SyncAlways, nil
	}
	return 0, fmt.Errorf("embednats: unknown sync policy %q (want default or always)", s)
}

// Default settings.
const (
	DefaultHost       = "127.0.0.1"
	DefaultMaxPayload = 8 << 20
	// ReadyTimeout bounds how long Start waits for the server.
	ReadyTimeout = 10 * time.Second
)

// Config configures an embedded server.
type Config struct {
	DataDir    string     // JetStream store directory (required)
	Host       string     // listen address; default 127.0.0.1
	Port       int        // 0: no TCP listener (in-process connections only); -1: random port
	Sync       SyncPolicy // when writes are fsynced, see the package documentation
	MaxPayload int32      // largest message; default 8 MiB
	Logger     *slog.Logger
	// Domain is the server's JetStream domain: another server linked to it
	// as a leaf node reaches its JetStream API as $JS.<Domain>.API. ""
	// leaves the server without one.
	Domain string
	// LeafListen, "host:port", accepts leaf node connections of other
	// servers (edge hubs); port 0 picks a free one (see LeafURL). "" accepts
	// none.
	LeafListen string
	// LeafRemote, nats-leaf:// URLs separated by commas (the nodes of one
	// cluster), links the server as a leaf node to another server's leaf
	// listener, dialling again (the next URL) whenever the link fails. ""
	// links to none.
	LeafRemote string
	// Access, when set, gives the server users and permissions (Access):
	// the hub's own connections (Connect) may do everything, others read
	// at most. Nil lets every connection do everything (tests only).
	Access *Access
}

// Server is a running embedded NATS server with JetStream.
type Server struct {
	ns     *server.Server
	listen bool
	opts   *server.Options             // as the server resolved them (a random leaf port)
	auth   []nats.Option               // the hub user's credentials and inbox, with Config.Access
	lock   interface{ Unlock() error } // the data directory's, released at Shutdown
}

// Start starts a server and waits, at most ReadyTimeout, until it accepts
// connections and JetStream is enabled. It fails at once, with
// ErrDataDirInUse, when another process holds the data directory, and with
// ErrPortInUse when the port to listen on is taken.
func Start(cfg Config) (_ *Server, err error) {
	if cfg.DataDir == "" {
		return nil, errors.New("embednats: DataDir is required")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("embednats: data dir: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = lock.Unlock()
		}
	}()
	cfg.Host = cmp.Or(cfg.Host, DefaultHost)
	if cfg.MaxPayload <= 0 {
		cfg.MaxPayload = DefaultMaxPayload
	}
	if cfg.Port < -1 {
		return nil, fmt.Errorf("embednats: invalid port %d", cfg.Port)
	}
	opts := &server.Options{
		ServerName: serverName(cfg.Domain),
		Host:       cfg.Host,
		Port:       cfg.Port,
		DontListen: cfg.Port == 0,
		JetStream:  true,
		StoreDir:   cfg.DataDir,
		MaxPayload: cfg.MaxPayload,
		NoSigs:     true,
		NoLog:      cfg.Logger == nil,
	}
	if err := leafOptions(opts, cfg); err != nil {
		return nil, err
	}
	auth, err := accessOptions(opts, cfg)
	if err != nil {
		return nil, err
	}
	switch cfg.Sync {
	case SyncDefault:
	case SyncAlways:
		opts.SyncAlways = true
	default:
		return nil, fmt.Errorf("embednats: unknown sync policy %d", int(cfg.Sync))
	}
	if opts.DontListen {
		opts.Port = server.RANDOM_PORT // ignored without a listener
	} else if cfg.Port > 0 {
		if err := checkPort(cfg.Host, cfg.Port); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embednats: new server: %w", err)
	}
	if cfg.Logger != nil {
		ns.SetLoggerV2(slogAdapter{cfg.Logger}, false, false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(ReadyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("embednats: server on %s not ready within %s", cfg.DataDir, ReadyTimeout)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("embednats: JetStream did not start on %s", cfg.DataDir)
	}
	return &Server{ns: ns, listen: !opts.DontListen, opts: opts, auth: auth, lock: lock}, nil
}

// Connect opens an in-process client connection, as the hub's own user
// when the server has Config.Access; opts are applied after the in-process
// option.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	all := append([]nats.Option{nats.InProcessServer(s.ns), nats.Name("rshub")}, s.auth...)
	all = append(all, opts...)
	nc, err := nats.Connect("", all...)
	if err != nil {
		return nil, fmt.Errorf("embednats: connect: %w", err)
	}
	return nc, nil
}

// Dial is Connect in the shape of natsconn.DialFunc, so a natsconn.Conn
// can dial the embedded server again when its connection was closed. The
// context is not used: an in-process connection does not block.
func (s *Server) Dial(_ context.Context, opts ...nats.Option) (*nats.Conn, error) {
	return s.Connect(opts...)
}

// ClientURL returns the nats:// URL other processes connect to, or "" when
// the server does not listen on TCP.
func (s *Server) ClientURL() string {
	if !s.listen {
		return ""
	}
	return s.ns.ClientURL()
}

// Shutdown stops the server gracefully and waits until it has stopped.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	if s.lock != nil {
		_ = s.lock.Unlock()
	}
}

// slogAdapter routes the server's log lines to slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Noticef(format string, v ...any) { a.l.Info(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Warnf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.HasPrefix(msg, payloadHint) {
		a.l.Debug(msg) // Config.MaxPayload is the caller's deliberate choice, not news at every start
		return
	}
	a.l.Warn(msg)
}

// payloadHint begins the warning the server logs at every start when
// MaxPayload is over 8 MB.
const payloadHint = "Maximum payloads over"

func (a slogAdapter) Fatalf(format string, v ...any) { a.l.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Errorf(format string, v ...any) { a.l.Error(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Debugf(format string, v ...any) { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Tracef(format string, v ...any) { a.l.Debug(fmt.Sprintf(format, v...)) }
