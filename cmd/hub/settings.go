package main

import (
	"flag"
	"io"

	"github.com/rshub/rshub/internal/config"
	"github.com/rshub/rshub/server"
)

// envPrefix prefixes every setting's environment variable.
const envPrefix = "RSHUB_"

// settings is every knob of the hub binary.
type settings = server.Config

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
	d := server.Defaults()
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&s.Listen, "listen", d.Listen, "HTTP listen address (host:port)")
	fs.StringVar(&s.HubURL, "hub-url", "", "public hub URL, exactly as it goes in rel=\"hub\" (default http://<listen>/)")
	fs.StringVar(&s.DataDir, "data-dir", d.DataDir, "directory of the embedded NATS server's JetStream store")
	fs.StringVar(&s.NATSURL, "nats-url", "", "external NATS server(s) with JetStream, comma separated; empty runs NATS embedded")
	fs.StringVar(&s.NATSListen, "nats-listen", d.NATSListen, "where the embedded NATS server accepts pipeline clients; \"off\" for in-process only")
	fs.StringVar(&s.NATSUser, "nats-user", d.NATSUser, "user name NATS clients on --nats-listen log in as to read the log (subscribe, JetStream consumers); they never write it")
	fs.StringVar(&s.NATSPasswordFile, "nats-password-file", "", "file whose first line is --nats-user's password; without it (or --nats-anonymous-read) no client outside the hub connects to the embedded NATS server")
	fs.BoolVar(&s.NATSAnonymousRead, "nats-anonymous-read", false, "let NATS clients without credentials read the log as --nats-user does (every channel, private ones too)")
	fs.StringVar(&s.LeafPasswordFile, "leaf-password-file", "", "file whose first line is the password of leaf links: the one edge hubs present to --leaf-listen, and the one an edge presents to --upstream-leaf (required with either)")
	fs.StringVar(&s.NATSDomain, "nats-domain", "", "JetStream domain of the embedded NATS server (default \""+server.DefaultDomain+"\" with --leaf-listen, \""+server.DefaultEdgeDomain+"\" with --upstream; each edge of one origin needs its own)")
	fs.StringVar(&s.LeafListen, "leaf-listen", d.LeafListen, "where the embedded NATS server accepts edge hubs' leaf node connections (host:port, e.g. 127.0.0.1:7422); \"off\" for none")
	fs.StringVar(&s.Upstream, "upstream", "", "make this hub an edge of the origin hub at this hub URL: its log mirrors the origin's, publishes are forwarded there (docs/edge.md)")
	fs.StringVar(&s.UpstreamLeaf, "upstream-leaf", "", "with --upstream and embedded NATS: the origin's --leaf-listen as nats-leaf://host:port (several, comma-separated, for an origin's NATS cluster)")
	fs.StringVar(&s.UpstreamDomain, "upstream-domain", d.UpstreamDomain, "with --upstream: the origin's JetStream domain")
	fs.IntVar(&s.NATSReplicas, "nats-replicas", d.NATSReplicas, "JetStream replicas of the log and KV buckets (3 on a cluster)")
	fs.StringVar(&s.Sync, "sync", d.Sync, "embedded log fsync policy: default (survives a process kill) or always (survives power loss)")
	fs.StringVar(&s.RedisURL, "redis-url", "", "keep hub state in Redis (redis://host:port/db) instead of JetStream KV")
	fs.DurationVar(&s.RetentionAge, "retention-age", 0, "drop notifications older than this from the log (0 keeps them)")
	fs.Int64Var(&s.RetentionBytes, "retention-bytes", 0, "bound the log's size in bytes (0 for no bound)")
	fs.Int64Var(&s.MaxBody, "max-body", d.MaxBody, "largest publish body or fetched topic in bytes")
	fs.Int64Var(&s.LeaseMin, "lease-min", d.LeaseMin, "shortest lease granted, seconds")
	fs.Int64Var(&s.LeaseDefault, "lease-default", d.LeaseDefault, "lease granted when none is asked, seconds")
	fs.Int64Var(&s.LeaseMax, "lease-max", d.LeaseMax, "longest lease granted, seconds")
	fs.BoolVar(&s.AllowOverlap, "allow-overlap", false, "accept notifications that overlap or precede the channel's last until (default: refuse with 409)")
	fs.BoolVar(&s.OpenTopics, "open-topics", false, "let subscriptions and publish pings name unknown topics (creates open channels: a public hub)")
	fs.IntVar(&s.MaxOpenChannels, "max-open-channels", d.MaxOpenChannels, "with --open-topics, the most channels the hub holds; a new topic beyond it is refused with 503")
	fs.IntVar(&s.MaxSubscriptions, "max-subscriptions", d.MaxSubscriptions, "with --open-topics, the most subscriptions the hub holds; a new one beyond it is refused with 503")
	fs.IntVar(&s.MaxSubscriptionsPerHost, "max-subscriptions-per-host", d.MaxSubscriptionsPerHost, "with --open-topics, the most subscriptions of one callback host; a new one beyond it is refused with 429")
	fs.DurationVar(&s.MaxClockSkew, "max-clock-skew", d.MaxClockSkew, "refuse notifications whose from, until or datetime lies further in the future than this")
	fs.DurationVar(&s.UnhealthyAfter, "unhealthy-after", d.UnhealthyAfter, "/healthz fails once the log or store has been unreachable this long, so a supervisor restarts the hub")
	fs.StringVar(&s.MetricsToken, "metrics-token", "", "bearer token /metrics needs (Prometheus: authorization.credentials); empty: /metrics on --listen answers anyone, without the series of private channels")
	fs.StringVar(&s.MetricsListen, "metrics-listen", "", "also serve /metrics, every series, on this address of its own (e.g. 127.0.0.1:9090 for a Prometheus on the same machine); behind --metrics-token when set")
	fs.StringVar(&s.AdminToken, "admin-token", "", "bearer token of the admin API and dashboard; empty disables them")
	fs.StringVar(&s.ChannelsFile, "channels", "", "JSON file with a list of channels to create at start")
	fs.StringVar(&s.AllowNetworks, "allow-networks", "", "comma-separated CIDRs callbacks and topics may resolve to despite being non-global (e.g. 127.0.0.0/8 for a local demo)")
	fs.StringVar(&s.Retry, "retry", "", "webhook retry schedule, e.g. 1s,x2,max=1h,attempts=15,jitter=0.2 (default: the delivery package's)")
	fs.StringVar(&s.SigMethod, "signature", d.SigMethod, "X-Hub-Signature method: sha1, sha256, sha384 or sha512")
	fs.StringVar(&s.SignatureScheme, "signature-scheme", d.SignatureScheme, "how webhooks are signed for subscriptions that do not ask (rshub.signature): websub (X-Hub-Signature), standard (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature; a hub.secret \"whsec_<base64>\" is that key, any other secret its raw bytes) or both")
	fs.IntVar(&s.PerHost, "per-host", d.PerHost, "concurrent deliveries a callback host starts with; it adapts between --per-host-min and --per-host-max, growing while the host answers quickly, holding while its answers queue, cut on answers far slower than its fastest and halved on 429, 503 and timeouts (Retry-After pauses the host, at most 10 min, once --breaker-host-endpoints callbacks gave one; before, only its subscription waits)")
	fs.IntVar(&s.PerHostMin, "per-host-min", d.PerHostMin, "fewest concurrent deliveries a callback host is cut down to")
	fs.IntVar(&s.PerHostMax, "per-host-max", d.PerHostMax, "most concurrent deliveries a callback host grows to (equal to --per-host-min: a fixed limit)")
	fs.Float64Var(&s.DefaultRate, "default-rate", 0, "deliveries per second of a webhook subscription that asks for no rshub.rate (0: no limit)")
	fs.Float64Var(&s.MaxRate, "max-rate", 0, "most deliveries per second of any webhook subscription, whatever its rshub.rate or the operator's rate (0: no cap)")
	fs.Float64Var(&s.PerHostRate, "per-host-rate", 0, "most deliveries per second to one callback host, over all its subscriptions (0: no limit); a delivery waits for it before it takes a --per-host slot")
	fs.IntVar(&s.BreakerFailures, "breaker-failures", d.BreakerFailures, "consecutive failures that open a callback host's circuit, holding back all its subscriptions: refused or reset connections, TLS or DNS failures, and 429, 503 or timeouts once --breaker-host-endpoints of its callbacks gave them (-1: no host breaker)")
	fs.DurationVar(&s.BreakerCoolDown, "breaker-cooldown", d.BreakerCoolDown, "how long an open host circuit holds deliveries back before one probe goes")
	fs.IntVar(&s.BreakerCallbackFailures, "breaker-callback-failures", d.BreakerCallbackFailures, "consecutive failed attempts that open one callback's circuit, holding back that callback only: any answer but 2xx and 410, and timeouts (-1: no callback breaker)")
	fs.DurationVar(&s.BreakerCallbackCoolDown, "breaker-callback-cooldown", d.BreakerCallbackCoolDown, "how long an open callback circuit holds that callback's deliveries back before one probe goes")
	fs.IntVar(&s.BreakerHostEndpoints, "breaker-host-endpoints", d.BreakerHostEndpoints, "how many different callbacks of a host must answer 429 or 503 or time out, with no other answer from the host between, before these count against the host and a Retry-After pauses it (1: any callback speaks for its host)")
	fs.IntVar(&s.CoalesceThreshold, "coalesce-threshold", d.CoalesceThreshold, "a webhook subscription with more undelivered notifications than this catches up with coalesced ones (net change per resource, at most 50,000 entries each); 0 disables it except for subscriptions asking rshub.coalesce=on, rshub.coalesce=off opts out")
	fs.StringVar(&s.LogFormat, "log-format", d.LogFormat, "log format: text or json")
	fs.StringVar(&s.LogLevel, "log-level", d.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&s.ConfigFile, "config", "", "JSON file of settings (keys are these flag names)")
	fs.BoolVar(&s.Demo, "demo", false, "create an open, hosted demo channel and allow loopback callbacks (never in production)")
	fs.DurationVar(&s.ShutdownTimeout, "shutdown-timeout", d.ShutdownTimeout, "how long a graceful shutdown may take")
	fs.StringVar(&s.WSOrigins, "ws-origins", "", "comma-separated Origins allowed on the WebSocket endpoint; empty allows same-origin only, * any")
	fs.StringVar(&s.WSToken, "ws-token", "", "token WebSocket clients must present (?token= or Authorization: Bearer); empty: none")
	fs.StringVar(&s.SubscriberJWTKey, "subscriber-jwt-key", "", "key of the tokens that let subscribers read private channels (Mercure's claims): an HMAC secret of 32 bytes or more, or a PEM public key (RS256, ES256, EdDSA)")
	fs.StringVar(&s.SubscriberJWKSURL, "subscriber-jwks-url", "", "JWKS URL of subscriber token keys, chosen by the token's kid; read through the SSRF guard and cached")
	fs.StringVar(&s.SubscriberJWTAudience, "subscriber-jwt-audience", "", "when set, subscriber tokens must name it in aud (identity providers issue tokens for many audiences)")
	fs.StringVar(&s.SubscriberJWTIssuer, "subscriber-jwt-issuer", "", "when set, subscriber tokens must have it as iss")
	fs.StringVar(&s.PublisherJWTKey, "publisher-jwt-key", "", "key of the tokens that let publishers post to private channels (mercure.publish claim): an HMAC secret or a PEM public key")
	fs.StringVar(&s.PublisherJWTAudience, "publisher-jwt-audience", "", "when set, publisher tokens must name it in aud")
	fs.StringVar(&s.PublisherJWTIssuer, "publisher-jwt-issuer", "", "when set, publisher tokens must have it as iss")
	fs.StringVar(&s.PublisherJWKSURL, "publisher-jwks-url", "", "JWKS URL of publisher token keys, chosen by the token's kid")
	fs.StringVar(&s.MercureAudience, "mercure-audience", "", "the resource identifier a Mercure access token (typ at+jwt, authorization_details) must name in aud, e.g. https://hub.example/.well-known/mercure; empty: the hub URL's origin followed by /.well-known/mercure")
	fs.StringVar(&s.MercureIssuer, "mercure-issuer", "", "the iss a Mercure access token must have; empty: not checked")
	fs.IntVar(&s.RotateEntries, "rotate-entries", d.RotateEntries, "close a pull-mode Change List at this many entries (at most 50000)")
	fs.DurationVar(&s.RotatePeriod, "rotate-period", d.RotatePeriod, "close a pull-mode Change List when Source time passes this period (0: by count only)")
	fs.DurationVar(&s.ClaimTTL, "claim-ttl", d.ClaimTTL, "bound on how long a dead hub's delivery shards wait for live hubs: shard leases last two thirds of it, renewed every sixth")
	fs.DurationVar(&s.Reconcile, "reconcile", d.Reconcile, "how often each hub re-lists subscriptions to start, stop or take over deliveries")
	fs.DurationVar(&s.StartupTimeout, "startup-timeout", d.StartupTimeout, "how long to wait at start for NATS JetStream and Redis to be ready")
	fs.StringVar(&s.Owner, "owner", "", "this hub's identity in delivery ownership claims; stable across restarts so a restarted hub resumes its own deliveries at once (default host name and listen address)")
	fs.StringVar(&s.OTelEndpoint, "otel-endpoint", "", "OTLP/HTTP collector to export traces to, e.g. http://127.0.0.1:4318 (/v1/traces is added to a URL without a path); empty uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, and with neither tracing is off (traceparent is still carried from publish to delivery)")
	fs.Float64Var(&s.OTelSample, "otel-sample", d.OTelSample, "share of new traces recorded when tracing, more than 0 and at most 1; a publish's sampled traceparent flag is followed")
	fs.StringVar(&s.GC, "gc", d.GC, "how the process paces garbage collection: heap (as the Go runtime with GOGC=100 while the hub allocates, but once it has gone --gc-idle without a collection, none until its heap has doubled, instead of the runtime's collection every 2 minutes, which costs a big idle hub about 3 s of CPU each at 1,000,000 subscriptions; and once a hub with 64 MiB or more of free heap goes quiet for 5 s, one collection that gives that heap back to the system, at most once per collection's worth of allocation) or runtime (the Go runtime's own); GOGC or GOMEMLIMIT in the environment always leaves it to the runtime")
	fs.DurationVar(&s.GCIdle, "gc-idle", d.GCIdle, "with --gc heap: how long the hub goes without a collection before it stops the Go runtime's periodic one (at most 1m30s)")
	fs.Usage = config.Usage(fs, envPrefix, intro)
	if err := config.Parse(fs, envPrefix, args, lookup, &s.ConfigFile); err != nil {
		return s, err
	}
	return s, s.Check()
}
