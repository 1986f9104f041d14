// Package app wires a whole hub process: the log, the state store, the hub,
// the delivery engines and the HTTP server. cmd/hub fills a Config from
// flags; examples and tests start hubs in-process with the same code.
package app

import (
	"fmt"
	"strings"
	"time"
)

// Config is every setting of a hub process. cmd/hub documents each one.
type Config struct {
	Listen          string
	HubURL          string
	DataDir         string
	NATSURL         string
	NATSListen      string
	NATSReplicas    int
	Sync            string
	RedisURL        string
	RetentionAge    time.Duration
	RetentionBytes  int64
	MaxBody         int64
	LeaseMin        int64
	LeaseDefault    int64
	LeaseMax        int64
	AllowOverlap    bool
	OpenTopics      bool
	AdminToken      string
	ChannelsFile    string
	AllowNetworks   string
	Retry           string
	SigMethod       string
	PerHost         int
	LogFormat       string
	LogLevel        string
	ConfigFile      string
	Demo            bool
	ShutdownTimeout time.Duration
	WSOrigins       string
	WSToken         string
	RotateEntries   int
	RotatePeriod    time.Duration
	ClaimTTL        time.Duration
	StartupTimeout  time.Duration
	Reconcile       time.Duration
}

// Check refuses bad settings with a message naming them.
func (s Config) Check() error {
	switch {
	case s.LogFormat != "text" && s.LogFormat != "json":
		return fmt.Errorf("--log-format must be text or json, got %q", s.LogFormat)
	case s.MaxBody <= 0 || s.MaxBody > 50<<20:
		return fmt.Errorf("--max-body must be between 1 and %d bytes (the ResourceSync document limit), got %d", 50<<20, s.MaxBody)
	case s.PerHost <= 0:
		return fmt.Errorf("--per-host must be positive, got %d", s.PerHost)
	case s.NATSReplicas < 1 || s.NATSReplicas > 5:
		return fmt.Errorf("--nats-replicas must be 1 to 5, got %d", s.NATSReplicas)
	case s.NATSURL != "" && s.Sync != "default":
		return fmt.Errorf("--sync applies to the embedded NATS server; configure fsync on the external server instead")
	case s.RotateEntries < 0 || s.RotateEntries > 50000:
		return fmt.Errorf("--rotate-entries must be 1 to 50000, got %d", s.RotateEntries)
	case s.StartupTimeout <= 0:
		return fmt.Errorf("--startup-timeout must be positive, got %v", s.StartupTimeout)
	case s.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be positive, got %v", s.ShutdownTimeout)
	}
	if s.HubURL != "" && !strings.HasPrefix(s.HubURL, "http://") && !strings.HasPrefix(s.HubURL, "https://") {
		return fmt.Errorf("--hub-url must be an absolute http(s) URL, got %q", s.HubURL)
	}
	return nil
}
