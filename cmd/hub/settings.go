package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rshub/rshub/internal/config"
)

// envPrefix prefixes every setting's environment variable.
const envPrefix = "RSHUB_"

// settings is every knob of the hub binary.
type settings struct {
	listen          string
	hubURL          string
	dataDir         string
	natsURL         string
	natsListen      string
	natsReplicas    int
	sync            string
	redisURL        string
	retentionAge    time.Duration
	retentionBytes  int64
	maxBody         int64
	leaseMin        int64
	leaseDefault    int64
	leaseMax        int64
	allowOverlap    bool
	openTopics      bool
	adminToken      string
	channelsFile    string
	allowNetworks   string
	retry           string
	sigMethod       string
	perHost         int
	logFormat       string
	logLevel        string
	configFile      string
	demo            bool
	shutdownTimeout time.Duration
}

const intro = `hub runs rshub, a WebSub hub for ResourceSync change notifications.

Sources POST change-notification payloads (or publish pings) to the hub URL;
the hub stores them in a durable log and delivers them to subscribers.
Every setting is a flag, an environment variable, or a key of the JSON file
given with --config (in that order of precedence).

Settings:
`

// parseSettings reads flags, then the environment, then the config file.
func parseSettings(args []string, lookup func(string) (string, bool), out io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&s.listen, "listen", "127.0.0.1:8080", "HTTP listen address (host:port)")
	fs.StringVar(&s.hubURL, "hub-url", "", "public hub URL, exactly as it goes in rel=\"hub\" (default http://<listen>/)")
	fs.StringVar(&s.dataDir, "data-dir", "./data", "directory of the embedded NATS server's JetStream store")
	fs.StringVar(&s.natsURL, "nats-url", "", "external NATS server(s) with JetStream, comma separated; empty runs NATS embedded")
	fs.StringVar(&s.natsListen, "nats-listen", "127.0.0.1:4222", "where the embedded NATS server accepts pipeline clients; \"off\" for in-process only")
	fs.IntVar(&s.natsReplicas, "nats-replicas", 1, "JetStream replicas of the log and KV buckets (3 on a cluster)")
	fs.StringVar(&s.sync, "sync", "default", "embedded log fsync policy: default (survives a process kill) or always (survives power loss)")
	fs.StringVar(&s.redisURL, "redis-url", "", "keep hub state in Redis (redis://host:port/db) instead of JetStream KV")
	fs.DurationVar(&s.retentionAge, "retention-age", 0, "drop notifications older than this from the log (0 keeps them)")
	fs.Int64Var(&s.retentionBytes, "retention-bytes", 0, "bound the log's size in bytes (0 for no bound)")
	fs.Int64Var(&s.maxBody, "max-body", 10<<20, "largest publish body or fetched topic in bytes")
	fs.Int64Var(&s.leaseMin, "lease-min", 300, "shortest lease granted, seconds")
	fs.Int64Var(&s.leaseDefault, "lease-default", 864000, "lease granted when none is asked, seconds")
	fs.Int64Var(&s.leaseMax, "lease-max", 2678400, "longest lease granted, seconds")
	fs.BoolVar(&s.allowOverlap, "allow-overlap", false, "accept notifications that overlap or precede the channel's last until (default: refuse with 409)")
	fs.BoolVar(&s.openTopics, "open-topics", false, "let subscriptions and publish pings name unknown topics (creates open channels: a public hub)")
	fs.StringVar(&s.adminToken, "admin-token", "", "bearer token of the admin API and dashboard; empty disables them")
	fs.StringVar(&s.channelsFile, "channels", "", "JSON file with a list of channels to create at start")
	fs.StringVar(&s.allowNetworks, "allow-networks", "", "comma-separated CIDRs callbacks and topics may resolve to despite being non-global (e.g. 127.0.0.0/8 for a local demo)")
	fs.StringVar(&s.retry, "retry", "", "webhook retry schedule, e.g. 1s,x2,max=1h,attempts=15,jitter=0.2 (default: the delivery package's)")
	fs.StringVar(&s.sigMethod, "signature", "sha256", "X-Hub-Signature method: sha1, sha256, sha384 or sha512")
	fs.IntVar(&s.perHost, "per-host", 8, "concurrent deliveries per callback host")
	fs.StringVar(&s.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&s.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&s.configFile, "config", "", "JSON file of settings (keys are these flag names)")
	fs.BoolVar(&s.demo, "demo", false, "create an open, hosted demo channel and allow loopback callbacks (never in production)")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a graceful shutdown may take")
	fs.Usage = config.Usage(fs, envPrefix, intro)
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if v, ok := lookup(config.EnvName(envPrefix, "config")); ok && s.configFile == "" {
		s.configFile = v
	}
	if err := config.Apply(fs, envPrefix, s.configFile, lookup); err != nil {
		return s, err
	}
	return s, s.check()
}

// check refuses bad settings with a message naming them.
func (s settings) check() error {
	switch {
	case s.logFormat != "text" && s.logFormat != "json":
		return fmt.Errorf("--log-format must be text or json, got %q", s.logFormat)
	case s.maxBody <= 0 || s.maxBody > 50<<20:
		return fmt.Errorf("--max-body must be between 1 and %d bytes (the ResourceSync document limit), got %d", 50<<20, s.maxBody)
	case s.perHost <= 0:
		return fmt.Errorf("--per-host must be positive, got %d", s.perHost)
	case s.natsReplicas < 1 || s.natsReplicas > 5:
		return fmt.Errorf("--nats-replicas must be 1 to 5, got %d", s.natsReplicas)
	case s.natsURL != "" && s.sync != "default":
		return fmt.Errorf("--sync applies to the embedded NATS server; configure fsync on the external server instead")
	}
	if s.hubURL != "" && !strings.HasPrefix(s.hubURL, "http://") && !strings.HasPrefix(s.hubURL, "https://") {
		return fmt.Errorf("--hub-url must be an absolute http(s) URL, got %q", s.hubURL)
	}
	return nil
}
