package server

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/gcgov"
	"github.com/rshub/rshub/wire"
)

// Config is every setting of a hub process. cmd/hub documents each one.
type Config struct {
	Listen       string
	HubURL       string
	DataDir      string
	NATSURL      string
	NATSListen   string
	NATSReplicas int
	// NATSDomain is the embedded NATS server's JetStream domain; "" gives
	// DefaultDomain to an origin and DefaultEdgeDomain to an edge. Every
	// edge of one origin needs its own.
	NATSDomain string
	// LeafListen is where the embedded NATS server accepts edge hubs' leaf
	// node connections; "off" accepts none.
	LeafListen string
	// Upstream, an origin hub's URL, makes this hub an edge (edge.go): its
	// log mirrors the origin's and its publishes are forwarded there.
	Upstream string
	// UpstreamLeaf is the origin's leaf node URL the embedded NATS server
	// links to (nats-leaf://host:port, or several separated by commas: the
	// nodes of an origin's NATS cluster); with NATSURL the external server's
	// own leafnodes configuration links it instead.
	UpstreamLeaf string
	// UpstreamDomain is the origin's JetStream domain.
	UpstreamDomain  string
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
	MaxOpenChannels int
	// MaxSubscriptions and MaxSubscriptionsPerHost bound the subscriptions
	// of a hub with OpenTopics, in all and per callback host.
	MaxSubscriptions        int
	MaxSubscriptionsPerHost int
	MaxClockSkew            time.Duration
	UnhealthyAfter          time.Duration
	AdminToken              string
	ChannelsFile            string
	AllowNetworks           string
	Retry                   string
	SigMethod               string
	SignatureScheme         string // signature scheme of subscriptions that ask for none (wire.SchemeWebSub, SchemeStandard, SchemeBoth)
	// PerHost is the concurrency a callback host starts with; it adapts
	// between PerHostMin and PerHostMax (delivery/hostadapt.go).
	PerHost    int
	PerHostMin int
	PerHostMax int
	// DefaultRate, MaxRate and PerHostRate are deliveries per second: of a
	// subscription that asks for none (rshub.rate), at most of any, and to
	// one callback host; 0 is no limit (delivery/rate.go).
	DefaultRate float64
	MaxRate     float64
	PerHostRate float64
	// BreakerFailures and BreakerCoolDown open a callback host's circuit
	// (what says the host is unreachable or overloaded counts against it);
	// BreakerCallbackFailures and BreakerCallbackCoolDown one callback's
	// (its failed answers); BreakerHostEndpoints is how many callbacks of
	// a host must give 429, 503 or timeouts before these count against the
	// host (delivery.BreakerConfig, delivery/isolate.go). -1 failures:
	// that breaker is off.
	BreakerFailures         int
	BreakerCoolDown         time.Duration
	BreakerCallbackFailures int
	BreakerCallbackCoolDown time.Duration
	BreakerHostEndpoints    int
	// CoalesceThreshold: a webhook subscription whose channel has more
	// undelivered records than this receives coalesced notifications; 0
	// disables it except for subscriptions that opt in (rshub.coalesce=on).
	CoalesceThreshold int
	LogFormat         string
	LogLevel          string
	ConfigFile        string
	Demo              bool
	ShutdownTimeout   time.Duration
	WSOrigins         string
	WSToken           string
	// SubscriberJWTKey and PublisherJWTKey verify the tokens of private
	// channels' readers and publishers: an HMAC secret or a PEM public
	// key; the JWKS URLs name key sets instead or as well (package access).
	SubscriberJWTKey  string
	SubscriberJWKSURL string
	PublisherJWTKey   string
	PublisherJWKSURL  string
	RotateEntries     int
	RotatePeriod      time.Duration
	ClaimTTL          time.Duration
	StartupTimeout    time.Duration
	Reconcile         time.Duration
	Owner             string
	// OTelEndpoint is the OTLP/HTTP collector traces go to; empty uses the
	// OTEL_EXPORTER_OTLP_* variables, and with none tracing is off.
	// OTelSample is the share of new traces recorded (internal/telemetry).
	OTelEndpoint string
	OTelSample   float64
	// GC is how the process paces garbage collection: GCHeap (the Go
	// runtime's GOGC=100 while the process allocates, and no collection
	// every 2 minutes while it is idle: internal/gcgov) or GCRuntime (the
	// runtime's own). GOGC or GOMEMLIMIT in the environment leaves the
	// runtime's either way.
	GC string
	// GCIdle is how long the hub goes without a collection before GCHeap
	// stops the periodic one (gcgov.Idle by default, at most
	// gcgov.MaxIdle).
	GCIdle time.Duration
	// NATSUser and NATSPasswordFile are the embedded NATS server's read
	// user (natsaccess.go): it may read the log, never write it; without a
	// password file there is none. NATSAnonymousRead lets clients without
	// credentials read as it does. LeafPasswordFile holds the password of
	// leaf links: the one edges present to --leaf-listen, and the one an
	// edge presents to --upstream-leaf.
	NATSUser          string
	NATSPasswordFile  string
	NATSAnonymousRead bool
	LeafPasswordFile  string
	// MetricsToken, when set, is the bearer token /metrics needs;
	// MetricsListen, when set, serves /metrics on a listener of its own
	// (metricsdoor.go).
	MetricsToken  string
	MetricsListen string
	// SubscriberJWTAudience and SubscriberJWTIssuer, when set, are the aud
	// subscriber tokens must name and the iss they must have; the
	// Publisher ones the same of publisher tokens.
	SubscriberJWTAudience string
	SubscriberJWTIssuer   string
	PublisherJWTAudience  string
	PublisherJWTIssuer    string

	// MercureAudience and MercureIssuer are the aud and iss the Mercure
	// face (server/mercure.go) expects of an access token of the current
	// draft; an empty audience is the hub URL's origin followed by
	// /.well-known/mercure, an empty issuer is not checked.
	MercureAudience string
	MercureIssuer   string

	// Middleware, when not nil, wraps the handler that serves Listen:
	// every request to the hub URL, the admin API, the dashboard and the
	// live sessions passes through it (the metrics listener's do not). A
	// program that embeds the hub adds its own logging or access rules
	// here; package servertest validates every answer against the admin
	// API's contract with it. cmd/hub has no setting for it.
	Middleware func(http.Handler) http.Handler `json:"-"`
}

// The values of Config.GC.
const (
	GCHeap    = "heap"
	GCRuntime = "runtime"
)

// Defaults returns the settings cmd/hub starts from: a hub on
// 127.0.0.1:8080 with NATS embedded in ./data. Callers that build a Config
// in code should start from it so that new settings get their defaults.
func Defaults() Config {
	return Config{
		Listen:                  "127.0.0.1:8080",
		DataDir:                 "./data",
		NATSListen:              "127.0.0.1:4222",
		NATSReplicas:            1,
		LeafListen:              "off",
		UpstreamDomain:          DefaultDomain,
		Sync:                    "default",
		MaxBody:                 10 << 20,
		LeaseMin:                300,
		LeaseDefault:            864000,
		LeaseMax:                2678400,
		SigMethod:               "sha256",
		SignatureScheme:         wire.SchemeWebSub,
		PerHost:                 delivery.DefaultPerHost,
		PerHostMin:              delivery.DefaultPerHostMin,
		PerHostMax:              delivery.DefaultPerHostMax,
		CoalesceThreshold:       delivery.DefaultCoalesceThreshold,
		BreakerFailures:         delivery.DefaultBreakerFailures,
		BreakerCoolDown:         delivery.DefaultBreakerCoolDown,
		BreakerCallbackFailures: delivery.DefaultBreakerFailures,
		BreakerCallbackCoolDown: delivery.DefaultBreakerCoolDown,
		BreakerHostEndpoints:    delivery.DefaultBreakerHostEndpoints,
		LogFormat:               "text",
		LogLevel:                "info",
		ShutdownTimeout:         15 * time.Second,
		RotateEntries:           50000,
		RotatePeriod:            24 * time.Hour,
		ClaimTTL:                30 * time.Second,
		Reconcile:               5 * time.Second,
		StartupTimeout:          time.Minute,
		MaxOpenChannels:         hub.DefaultMaxOpenChannels,
		MaxSubscriptions:        hub.DefaultMaxSubscriptions,
		MaxSubscriptionsPerHost: hub.DefaultMaxSubscriptionsPerHost,
		MaxClockSkew:            5 * time.Minute,
		UnhealthyAfter:          2 * time.Minute,
		OTelSample:              1,
		GC:                      GCHeap,
		GCIdle:                  gcgov.Idle,
		NATSUser:                embednats.DefaultReadUser,
	}
}

// withDefaults fills settings added after a caller wrote its Config (zero
// values) from Defaults.
func (s Config) withDefaults() Config {
	d := Defaults()
	s.MaxOpenChannels = cmp.Or(s.MaxOpenChannels, d.MaxOpenChannels)
	s.MaxSubscriptions = cmp.Or(s.MaxSubscriptions, d.MaxSubscriptions)
	s.MaxSubscriptionsPerHost = cmp.Or(s.MaxSubscriptionsPerHost, d.MaxSubscriptionsPerHost)
	s.MaxClockSkew = cmp.Or(s.MaxClockSkew, d.MaxClockSkew)
	s.UnhealthyAfter = cmp.Or(s.UnhealthyAfter, d.UnhealthyAfter)
	s.OTelSample = cmp.Or(s.OTelSample, d.OTelSample)
	s.PerHostMin = cmp.Or(s.PerHostMin, d.PerHostMin)
	s.PerHostMax = cmp.Or(s.PerHostMax, max(d.PerHostMax, s.PerHost))
	s.LeafListen = cmp.Or(s.LeafListen, d.LeafListen)
	s.UpstreamDomain = cmp.Or(s.UpstreamDomain, d.UpstreamDomain)
	s.GC = cmp.Or(s.GC, d.GC)
	s.GCIdle = cmp.Or(s.GCIdle, d.GCIdle)
	s.NATSUser = cmp.Or(s.NATSUser, d.NATSUser)
	return s
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
	case s.PerHostMin < 0 || s.PerHostMax < 0 || s.PerHostMax > 4096:
		return fmt.Errorf("--per-host-min and --per-host-max must be 1 to 4096, got %d and %d", s.PerHostMin, s.PerHostMax)
	case (s.PerHostMin > 0 && s.PerHost < s.PerHostMin) || (s.PerHostMax > 0 && s.PerHost > s.PerHostMax):
		return fmt.Errorf("--per-host (the concurrency a callback host starts with) must lie between --per-host-min %d and --per-host-max %d, got %d", s.PerHostMin, s.PerHostMax, s.PerHost)
	case badRate(s.DefaultRate) || badRate(s.MaxRate) || badRate(s.PerHostRate):
		return fmt.Errorf("--default-rate, --max-rate and --per-host-rate must be 0 (no limit) or %g to %g deliveries a second, got %g, %g and %g", hub.MinRate, hub.MaxRate, s.DefaultRate, s.MaxRate, s.PerHostRate)
	case s.MaxRate > 0 && s.DefaultRate > s.MaxRate:
		return fmt.Errorf("--default-rate %g exceeds --max-rate %g", s.DefaultRate, s.MaxRate)
	case s.BreakerFailures < -1 || s.BreakerCallbackFailures < -1 || s.BreakerFailures > 10000 || s.BreakerCallbackFailures > 10000:
		return fmt.Errorf("--breaker-failures and --breaker-callback-failures must be -1 (off) or 1 to 10000, got %d and %d", s.BreakerFailures, s.BreakerCallbackFailures)
	case s.BreakerCoolDown < 0 || s.BreakerCallbackCoolDown < 0 || s.BreakerCoolDown > 24*time.Hour || s.BreakerCallbackCoolDown > 24*time.Hour:
		return fmt.Errorf("--breaker-cooldown and --breaker-callback-cooldown must be 0 (the default %v) to 24h, got %v and %v", delivery.DefaultBreakerCoolDown, s.BreakerCoolDown, s.BreakerCallbackCoolDown)
	case s.BreakerHostEndpoints < 0 || s.BreakerHostEndpoints > 1000:
		return fmt.Errorf("--breaker-host-endpoints must be 1 to 1000, got %d", s.BreakerHostEndpoints)
	case s.CoalesceThreshold < 0:
		return fmt.Errorf("--coalesce-threshold must be 0 (off) or positive, got %d", s.CoalesceThreshold)
	case s.NATSReplicas < 1 || s.NATSReplicas > 5:
		return fmt.Errorf("--nats-replicas must be 1 to 5, got %d", s.NATSReplicas)
	case s.NATSURL != "" && s.Sync != "default":
		return fmt.Errorf("--sync applies to the embedded NATS server; configure fsync on the external server instead")
	case s.RotateEntries < 0 || s.RotateEntries > 50000:
		return fmt.Errorf("--rotate-entries must be 1 to 50000, got %d", s.RotateEntries)
	case !wire.ValidSigMethod(s.SigMethod):
		return fmt.Errorf("--signature must be sha1, sha256, sha384 or sha512, got %q", s.SigMethod)
	case !wire.ValidScheme(s.SignatureScheme):
		return fmt.Errorf("--signature-scheme must be %s, %s or %s, got %q", wire.SchemeWebSub, wire.SchemeStandard, wire.SchemeBoth, s.SignatureScheme)
	case s.StartupTimeout <= 0:
		return fmt.Errorf("--startup-timeout must be positive, got %v", s.StartupTimeout)
	case s.MaxOpenChannels < 0:
		return fmt.Errorf("--max-open-channels must be positive, got %d", s.MaxOpenChannels)
	case s.MaxSubscriptions < 0:
		return fmt.Errorf("--max-subscriptions must be positive, got %d", s.MaxSubscriptions)
	case s.MaxSubscriptionsPerHost < 0:
		return fmt.Errorf("--max-subscriptions-per-host must be positive, got %d", s.MaxSubscriptionsPerHost)
	case s.MaxClockSkew < 0:
		return fmt.Errorf("--max-clock-skew must be positive, got %v", s.MaxClockSkew)
	case s.UnhealthyAfter < 0:
		return fmt.Errorf("--unhealthy-after must be positive, got %v", s.UnhealthyAfter)
	case s.OTelSample <= 0 || s.OTelSample > 1:
		return fmt.Errorf("--otel-sample must be more than 0 and at most 1, got %g (to trace nothing, leave --otel-endpoint unset)", s.OTelSample)
	case s.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be positive, got %v", s.ShutdownTimeout)
	case s.GC != "" && s.GC != GCHeap && s.GC != GCRuntime:
		return fmt.Errorf("--gc must be %s or %s, got %q", GCHeap, GCRuntime, s.GC)
	case s.GCIdle < 0 || s.GCIdle > gcgov.MaxIdle:
		return fmt.Errorf("--gc-idle must be 0 (the default %v) to %v, before the Go runtime's 2 minutes, got %v", gcgov.Idle, gcgov.MaxIdle, s.GCIdle)
	}
	if s.HubURL != "" && !strings.HasPrefix(s.HubURL, "http://") && !strings.HasPrefix(s.HubURL, "https://") {
		return fmt.Errorf("--hub-url must be an absolute http(s) URL, got %q", s.HubURL)
	}
	if _, _, err := s.verifiers(http.DefaultClient, nil, access.AccessRules{}); err != nil { // the keys, refused before anything starts
		return err
	}
	if err := s.checkEdge(); err != nil {
		return err
	}
	return s.checkNATSAccess()
}

// badRate reports whether r is neither 0 (no limit) nor a rate a
// subscription may have (hub.CheckRate).
func badRate(r float64) bool { return r != 0 && hub.CheckRate(r) != nil }
