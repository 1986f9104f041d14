package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/server"
)

// Scenario names accepted by Config.Scenarios.
const (
	ScenarioWebhook   = "webhook"
	ScenarioWebSocket = "websocket"
	ScenarioSSE       = "sse"
	ScenarioNATS      = "nats"
	ScenarioCatchUp   = "catchup"
	// ScenarioWebhookWide is the webhook scenario with WideSubscribers
	// subscribers; ScenarioScale is many channels on one hub (scale.go).
	ScenarioWebhookWide = "webhook-wide"
	// ScenarioWebhookOneHost is the webhook scenario with every callback on
	// one host and OneHostNotifications notifications per measurement;
	// ScenarioWebhookEachHost gives every callback a host of its own.
	ScenarioWebhookOneHost  = "webhook-1host"
	ScenarioWebhookEachHost = "webhook-each-host"
	ScenarioScale           = "scale"
	// ScenarioCluster is three hub processes on a NATS cluster and Redis
	// (cluster.go); it runs only when named.
	ScenarioCluster = "cluster"
	// ScenarioSubscribeMemory is the hub's RSS per subscription taken
	// through the subscribe form and verified (submem.go); it runs only
	// when named.
	ScenarioSubscribeMemory = "subscribe-memory"
)

// AllScenarios returns every scenario in the order they run.
func AllScenarios() []string {
	return []string{ScenarioWebhookOneHost, ScenarioWebhook, ScenarioWebhookEachHost, ScenarioWebSocket, ScenarioSSE, ScenarioNATS, ScenarioCatchUp, ScenarioWebhookWide, ScenarioScale}
}

// OptInScenarios returns the scenarios --scenarios accepts that do not run
// by default: they start many processes and take minutes.
func OptInScenarios() []string { return []string{ScenarioCluster, ScenarioSubscribeMemory} }

// Config is one benchmark invocation. ParseFlags fills it from the command
// line; Quick returns the small sizes used by --quick and the tests.
type Config struct {
	Scenarios     []string // subset of AllScenarios()
	Runs          int      // repetitions of each scenario; medians are over these
	Subscribers   int      // webhook subscriptions on one channel
	Servers       int      // loopback callback servers the subscribers are spread over
	PerHost       int      // hub's starting concurrent deliveries per callback host (host:port); 0: the hub's default
	Clients       int      // WebSocket clients
	Notifications int      // notifications per webhook and WebSocket measurement
	// OneHostNotifications is the notifications per measurement of the
	// webhook-1host scenario.
	OneHostNotifications int
	// CeilingWorkers are the plain senders' worker counts the webhook
	// scenarios sweep (besides the hub's own concurrency); the ceiling is
	// the fastest.
	CeilingWorkers []int
	// Ping is how the webhook scenarios publish: PingFat or PingThin.
	Ping         string
	NATSMessages int // notifications per NATS measurement
	// CatchUpNotifications and CatchUpResources size the catch-up
	// scenario: notifications published while its subscribers are
	// offline, and the resources they touch.
	CatchUpNotifications int
	CatchUpResources     int
	DurationCap          time.Duration // bound of every wait for receipts
	JSON                 bool          // machine-readable output
	Quick                bool          // small sizes (set by --quick)
	// FleetCommand is the argv that starts a WebSocket client fleet child
	// process (RunFleet on its stdin and stdout). Default: this executable
	// with the hidden flag FleetFlag.
	FleetCommand []string
	// FleetEnv is added to the child's environment.
	FleetEnv   []string
	Verbose    bool   // hub logs at info instead of error
	CPUProfile string // write a CPU profile of the whole invocation here

	// WideSubscribers sizes the webhook-wide scenario.
	WideSubscribers int
	// ScaleSubscribers, ScaleChannels, ScaleNotifications and ScaleRate
	// size the scale scenario: subscriptions spread evenly over channels,
	// notifications published per measurement at ScaleRate per second.
	ScaleSubscribers, ScaleChannels, ScaleNotifications, ScaleRate int
	// ScaleIdle is how long each scale hub is watched doing nothing.
	ScaleIdle time.Duration
	// HubGC is the scale hub children's --gc; "" is the hub's default.
	HubGC string
	// HubCommand is the argv that starts a hub child process (RunHubChild
	// on its stdin and stdout). Default: this executable with the hidden
	// flag HubFlag. HubEnv is added to the child's environment.
	HubCommand []string
	HubEnv     []string
	// HubCPUProfile, when set, has every hub child process write a CPU
	// profile of its whole life to HubCPUProfile.<port>.
	HubCPUProfile string
	// HubIdleProfile, when set, has the scale scenario's big hub write a
	// CPU profile of each idle window to HubIdleProfile.<run>.
	HubIdleProfile string
	// HubPublishProfile, when set, has both hubs of the scale scenario
	// write a CPU profile of each fixed-rate measurement to
	// HubPublishProfile.big.<run> and HubPublishProfile.base.<run>.
	HubPublishProfile string
	// HubHeapProfile, when set, has the scale scenario's big hub write a
	// heap profile once settled, before each run's measurements, to
	// HubHeapProfile.<run>.
	HubHeapProfile string

	// MemSubscriptions and MemChannels size the subscribe-memory
	// scenario; MemWait is how long after serving and after the last
	// verification its hub's RSS is read.
	MemSubscriptions, MemChannels int
	MemWait                       time.Duration
	// MemRestart has the subscribe-memory scenario restart its hub after
	// the RSS reading, cleanly and after a kill, and time each restart
	// until every queue delivers (submem_restart.go).
	MemRestart bool

	// ClusterSubscriptions and ClusterChannels size the cluster scenario;
	// ClusterClaimTTL is its hubs' --claim-ttl and ClusterIdle the window
	// its idle Redis work is measured over.
	ClusterSubscriptions, ClusterChannels int
	ClusterClaimTTL, ClusterIdle          time.Duration
	// ClusterSource is the rshub module directory the cluster scenario
	// builds cmd/hub from ("": the one the bench runs in), to measure
	// another version beside this one.
	ClusterSource string
	// ClusterLogs, when set, is a directory where the cluster scenario
	// writes the whole output of each process (<life>-hub0.log, …).
	ClusterLogs string
}

// maxCallbackServers is the most loopback callback servers a webhook
// scenario starts.
const maxCallbackServers = 1000

// FleetFlag is the hidden flag that turns the bench binary into a
// WebSocket client fleet child process. It is not listed by --help.
const FleetFlag = "internal-ws-fleet"

// Defaults returns the full-size configuration.
func Defaults() Config {
	return Config{
		Scenarios:     AllScenarios(),
		Runs:          3,
		Subscribers:   1000,
		Servers:       4,
		PerHost:       0, // the hub's default: adaptive
		Clients:       10000,
		Notifications: 50,
		NATSMessages:  2000,

		OneHostNotifications: 200,
		CeilingWorkers:       DefaultCeilingWorkers(),
		Ping:                 PingFat,
		DurationCap:          60 * time.Second,

		CatchUpNotifications: 100000,
		CatchUpResources:     1000,

		WideSubscribers:    10000,
		ScaleSubscribers:   100000,
		ScaleChannels:      10000,
		ScaleNotifications: 500,
		ScaleRate:          50,
		ScaleIdle:          5 * time.Second,

		MemSubscriptions: 50000,
		MemChannels:      5000,
		MemWait:          20 * time.Second,

		ClusterSubscriptions: 100000,
		ClusterChannels:      100,
		ClusterClaimTTL:      10 * time.Second,
		ClusterIdle:          10 * time.Second,
	}
}

// Quick shrinks c to sizes that finish in seconds; the code paths are the
// full run's.
func Quick(c Config) Config {
	c.Quick = true
	c.Runs = 1
	c.Subscribers = 50
	c.Servers = 2
	c.Clients = 200
	c.Notifications = 5
	c.OneHostNotifications = 5
	c.NATSMessages = 200
	c.CatchUpNotifications = 2000
	c.CatchUpResources = 100
	c.DurationCap = 20 * time.Second
	c.WideSubscribers = 200
	c.ScaleSubscribers, c.ScaleChannels, c.ScaleNotifications = 500, 50, 20
	c.ScaleIdle = time.Second
	c.ClusterSubscriptions, c.ClusterChannels, c.ClusterClaimTTL, c.ClusterIdle = 2000, 10, 5*time.Second, 3*time.Second
	c.MemSubscriptions, c.MemChannels, c.MemWait = 2000, 200, 2*time.Second
	return c
}

// ParseFlags reads the command line into a Config. It returns flag.ErrHelp
// after printing usage for --help, and fleet=true when the hidden FleetFlag
// asks for the child-process role.
func ParseFlags(args []string, out io.Writer) (c Config, fleet bool, err error) {
	d := Defaults()
	fs := flag.NewFlagSet("rshub-bench", flag.ContinueOnError)
	fs.SetOutput(out)
	scen := fs.String("scenarios", strings.Join(d.Scenarios, ","), "comma-separated scenarios to run: "+strings.Join(AllScenarios(), ", ")+"; only when named: "+strings.Join(OptInScenarios(), ", "))
	fs.IntVar(&c.Runs, "runs", d.Runs, "repetitions of each scenario; the table reports medians over them")
	fs.IntVar(&c.Subscribers, "subscribers", d.Subscribers, "webhook: WebSub subscriptions (loopback callbacks) on one channel")
	fs.IntVar(&c.Servers, "callback-servers", d.Servers, "webhook: loopback HTTP servers the callbacks are spread over (each is one callback host)")
	fs.IntVar(&c.PerHost, "per-host", d.PerHost, "webhook: concurrent deliveries a callback host starts with on the hub, adapting up to the hub's --per-host-max (0: the hub's defaults); the ceiling runs callback-servers × that maximum keep-alive workers, at least 32")
	fs.IntVar(&c.Clients, "clients", d.Clients, "websocket and sse: client connections (websocket: in a child process)")
	fs.IntVar(&c.Notifications, "notifications", d.Notifications, "webhook and websocket: notifications published per measurement (each fans out to every receiver)")
	fs.IntVar(&c.OneHostNotifications, "one-host-notifications", d.OneHostNotifications, "webhook-1host: notifications published per measurement")
	fs.StringVar(&c.Ping, "ping", d.Ping, "webhook scenarios: fat (the notification POSTed to the hub) or thin (hub.mode=publish&hub.url=<topic> POSTed; the hub GETs the notification from a loopback Source before it answers)")
	workers := fs.String("ceiling-workers", joinInts(d.CeilingWorkers), "webhook scenarios: comma-separated worker counts of the plain senders swept for the ceiling (the hub's own concurrency is added); the fastest is the ceiling, the others are printed beside it")
	fs.IntVar(&c.NATSMessages, "nats-messages", d.NATSMessages, "nats: notifications published per measurement")
	fs.IntVar(&c.CatchUpNotifications, "catchup-notifications", d.CatchUpNotifications, "catchup: notifications published while the subscribers are offline")
	fs.IntVar(&c.CatchUpResources, "catchup-resources", d.CatchUpResources, "catchup: resources those notifications touch")
	fs.DurationVar(&c.DurationCap, "duration-cap", d.DurationCap, "longest wait for the receipts of one measurement; a measurement that hits it is reported incomplete")
	fs.IntVar(&c.WideSubscribers, "wide-subscribers", d.WideSubscribers, "webhook-wide: WebSub subscriptions on one channel (the webhook scenario at this size)")
	fs.IntVar(&c.ScaleSubscribers, "scale-subscribers", d.ScaleSubscribers, "scale: webhook subscriptions on the big hub, spread evenly over --scale-channels")
	fs.IntVar(&c.ScaleChannels, "scale-channels", d.ScaleChannels, "scale: channels on the big hub")
	fs.IntVar(&c.ScaleNotifications, "scale-notifications", d.ScaleNotifications, "scale: notifications per fixed-rate measurement, each to another channel")
	fs.IntVar(&c.ScaleRate, "scale-rate", d.ScaleRate, "scale: notifications per second of the fixed-rate measurement")
	fs.DurationVar(&c.ScaleIdle, "scale-idle", d.ScaleIdle, "scale: how long each hub is watched doing nothing for its idle CPU; over 2m it holds the Go runtime's periodic collection of a hub paced by the runtime (--hub-gc runtime), which a shorter window adds as its cost spread over 2 min")
	fs.StringVar(&c.HubGC, "hub-gc", "", "scale: the hub children's --gc: heap (the hub's default) or runtime")
	fs.StringVar(&c.HubIdleProfile, "hub-idle-profile", "", "scale: the big hub child writes a CPU profile of each run's idle window to this path + '.<run>' (not with --hub-cpuprofile)")
	fs.StringVar(&c.HubPublishProfile, "hub-publish-profile", "", "scale: both hub children write a CPU profile of each run's fixed-rate measurement to this path + '.big.<run>' and '.base.<run>' (compare with go tool pprof -diff_base; not with --hub-cpuprofile)")
	fs.StringVar(&c.HubHeapProfile, "hub-heap-profile", "", "scale: the big hub child writes a heap profile of its settled state before each run's measurements to this path + '.<run>'; subscribe-memory: the hub child writes one before subscribing and one after verification to this path + '.submem.<run>.before' and '.after'")
	fs.StringVar(&c.HubCPUProfile, "hub-cpuprofile", "", "scale: each hub child process writes a CPU profile of its whole life to this path + '.<hub port>'")
	fs.IntVar(&c.MemSubscriptions, "mem-subscriptions", d.MemSubscriptions, "subscribe-memory: subscriptions taken through the subscribe form and verified, spread evenly over --mem-channels")
	fs.IntVar(&c.MemChannels, "mem-channels", d.MemChannels, "subscribe-memory: open channels seeded into the hub's store")
	fs.DurationVar(&c.MemWait, "mem-wait", d.MemWait, "subscribe-memory: how long after the hub serves, and after every queue is delivering, its RSS is read")
	fs.BoolVar(&c.MemRestart, "mem-restart", false, "subscribe-memory: then stop the hub child cleanly, start it again on the same store and time until every queue is active and every subscriber received one notification published to each channel, its RSS after; the same after kill -9 (--mem-subscriptions must be a multiple of --mem-channels)")
	fs.IntVar(&c.ClusterSubscriptions, "cluster-subscriptions", d.ClusterSubscriptions, "cluster: webhook subscriptions shared by the three hubs, spread evenly over --cluster-channels")
	fs.IntVar(&c.ClusterChannels, "cluster-channels", d.ClusterChannels, "cluster: channels; each takeover and join round publishes one notification to each")
	fs.DurationVar(&c.ClusterClaimTTL, "cluster-claim-ttl", d.ClusterClaimTTL, "cluster: the hubs' --claim-ttl (their --reconcile is a fifth of it)")
	fs.DurationVar(&c.ClusterIdle, "cluster-idle", d.ClusterIdle, "cluster: window over which idle Redis commands/s are measured")
	fs.StringVar(&c.ClusterLogs, "cluster-logs", "", "cluster: directory to write each process's whole output to (<life>-hub0.log, …; hubs log at warn level), e.g. to read what a hub said during a takeover")
	fs.StringVar(&c.ClusterSource, "cluster-source", "", "cluster: directory of the rshub module to build cmd/hub from (default: the current one), e.g. an older version unpacked with git archive")
	fs.BoolVar(&c.JSON, "json", false, "print the results as JSON instead of a table")
	quick := fs.Bool("quick", false, "small sizes (50 subscribers, 200 clients, 1 run): a smoke test of about "+about(PlanTotal(Plan(Quick(d)))))
	fs.BoolVar(&c.Verbose, "verbose", false, "show the hub's info-level logs")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of this process (hubs, ceilings and load) to this file; read it with go tool pprof, one side alone with -tagfocus side=hub (or side=ceiling, side=callback server)")
	fs.Bool(FleetFlag, false, "")
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: rshub-bench [flags]\n\n"+
			"Runs bounded load scenarios against an in-process hub and, in the same run, against a\n"+
			"hub-less baseline of the same transport (the machine's ceiling), and prints per figure the\n"+
			"median hub value, the median ceiling value and the median per-run ratio hub/ceiling.\n"+
			"Every address is loopback.\n\n%s\nFlags:\n", durationHelp(d))
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name == FleetFlag {
				return
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "false" {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(out, "  --%s\n    \t%s%s\n", f.Name, f.Usage, def)
		})
	}
	if err := fs.Parse(args); err != nil {
		return c, false, err
	}
	if fs.NArg() > 0 {
		return c, false, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if fs.Lookup(FleetFlag).Value.String() == "true" {
		return c, true, nil
	}
	c.Scenarios = splitScenarios(*scen)
	if c.CeilingWorkers, err = splitInts(*workers); err != nil {
		return c, false, fmt.Errorf("--ceiling-workers: %w", err)
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		q := Quick(c)
		// Sizes given explicitly win over --quick's.
		keep := func(name string, dst *int, v int) {
			if set[name] {
				*dst = v
			}
		}
		keep("runs", &q.Runs, c.Runs)
		keep("subscribers", &q.Subscribers, c.Subscribers)
		keep("callback-servers", &q.Servers, c.Servers)
		keep("per-host", &q.PerHost, c.PerHost)
		keep("clients", &q.Clients, c.Clients)
		keep("notifications", &q.Notifications, c.Notifications)
		keep("one-host-notifications", &q.OneHostNotifications, c.OneHostNotifications)
		keep("nats-messages", &q.NATSMessages, c.NATSMessages)
		keep("catchup-notifications", &q.CatchUpNotifications, c.CatchUpNotifications)
		keep("catchup-resources", &q.CatchUpResources, c.CatchUpResources)
		keep("wide-subscribers", &q.WideSubscribers, c.WideSubscribers)
		keep("scale-subscribers", &q.ScaleSubscribers, c.ScaleSubscribers)
		keep("scale-channels", &q.ScaleChannels, c.ScaleChannels)
		keep("scale-notifications", &q.ScaleNotifications, c.ScaleNotifications)
		keep("scale-rate", &q.ScaleRate, c.ScaleRate)
		if set["scale-idle"] {
			q.ScaleIdle = c.ScaleIdle
		}
		keep("mem-subscriptions", &q.MemSubscriptions, c.MemSubscriptions)
		keep("mem-channels", &q.MemChannels, c.MemChannels)
		if set["mem-wait"] {
			q.MemWait = c.MemWait
		}
		keep("cluster-subscriptions", &q.ClusterSubscriptions, c.ClusterSubscriptions)
		keep("cluster-channels", &q.ClusterChannels, c.ClusterChannels)
		if set["cluster-claim-ttl"] {
			q.ClusterClaimTTL = c.ClusterClaimTTL
		}
		if set["cluster-idle"] {
			q.ClusterIdle = c.ClusterIdle
		}
		if set["duration-cap"] {
			q.DurationCap = c.DurationCap
		}
		c = q
	}
	return c, false, c.Check()
}

// durationHelp says how long the default run, --quick and the cluster
// scenario take, from their estimates.
func durationHelp(d Config) string {
	cluster := d
	cluster.Scenarios = OptInScenarios()
	text := fmt.Sprintf("How long: a run with no flags (%s; %d runs each) takes about %s on 2 cores; --quick about %s; "+
		"--scenarios cluster about %s (with --quick about %s). Each run prints its scenarios and their estimates "+
		"before it starts, and \"scenario k of n\" with the time elapsed and left as it goes.",
		strings.Join(d.Scenarios, ", "), d.Runs, about(PlanTotal(Plan(d))), about(PlanTotal(Plan(Quick(d)))),
		about(PlanTotal(Plan(cluster))), about(PlanTotal(Plan(Quick(cluster)))))
	return strings.Join(wrap(text, 92), "\n") + "\n"
}

// joinInts renders ns as a comma-separated list.
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// splitInts parses a comma-separated list of integers.
func splitInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", p)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitScenarios(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Check refuses settings the scenarios cannot run with.
func (c Config) Check() error {
	if len(c.Scenarios) == 0 {
		return errors.New("--scenarios names none")
	}
	for _, s := range c.Scenarios {
		if !slices.Contains(AllScenarios(), s) && !slices.Contains(OptInScenarios(), s) {
			return fmt.Errorf("--scenarios: unknown scenario %q (want %s)", s, strings.Join(append(AllScenarios(), OptInScenarios()...), ", "))
		}
	}
	switch {
	case c.Runs < 1 || c.Runs > 20:
		return fmt.Errorf("--runs must be 1 to 20, got %d", c.Runs)
	case c.Subscribers < 1 || c.Subscribers > 10000:
		return fmt.Errorf("--subscribers must be 1 to 10000, got %d", c.Subscribers)
	case c.Servers < 1 || c.Servers > maxCallbackServers:
		return fmt.Errorf("--callback-servers must be 1 to %d, got %d", maxCallbackServers, c.Servers)
	case c.PerHost < 0 || c.PerHost > 4096:
		return fmt.Errorf("--per-host must be 0 (the hub's default) to 4096, got %d", c.PerHost)
	case c.Clients < 1 || c.Clients > 50000:
		return fmt.Errorf("--clients must be 1 to 50000, got %d", c.Clients)
	case c.Notifications < 2 || c.Notifications > 10000:
		return fmt.Errorf("--notifications must be 2 to 10000, got %d", c.Notifications)
	case c.OneHostNotifications < 2 || c.OneHostNotifications > 10000:
		return fmt.Errorf("--one-host-notifications must be 2 to 10000, got %d", c.OneHostNotifications)
	case c.Ping != PingFat && c.Ping != PingThin:
		return fmt.Errorf("--ping must be %s or %s, got %q", PingFat, PingThin, c.Ping)
	case len(c.CeilingWorkers) == 0 || len(c.CeilingWorkers) > 10 || slices.Min(c.CeilingWorkers) < 1 || slices.Max(c.CeilingWorkers) > 4096:
		return fmt.Errorf("--ceiling-workers must name 1 to 10 counts of 1 to 4096, got %v", c.CeilingWorkers)
	case c.NATSMessages < 2 || c.NATSMessages > 1000000:
		return fmt.Errorf("--nats-messages must be 2 to 1000000, got %d", c.NATSMessages)
	case c.CatchUpNotifications < 2 || c.CatchUpNotifications > 1000000:
		return fmt.Errorf("--catchup-notifications must be 2 to 1000000, got %d", c.CatchUpNotifications)
	case c.CatchUpResources < 1 || c.CatchUpResources > c.CatchUpNotifications:
		return fmt.Errorf("--catchup-resources must be 1 to --catchup-notifications, got %d", c.CatchUpResources)
	case c.WideSubscribers < 1 || c.WideSubscribers > 10000:
		return fmt.Errorf("--wide-subscribers must be 1 to 10000, got %d", c.WideSubscribers)
	case c.ScaleChannels < 1 || c.ScaleChannels > 100000:
		return fmt.Errorf("--scale-channels must be 1 to 100000, got %d", c.ScaleChannels)
	case c.ScaleSubscribers < c.ScaleChannels || c.ScaleSubscribers > 1000000 || c.ScaleSubscribers%c.ScaleChannels != 0:
		return fmt.Errorf("--scale-subscribers must be a multiple of --scale-channels, at most 1000000, got %d", c.ScaleSubscribers)
	case c.ScaleNotifications < 2 || c.ScaleNotifications > c.ScaleChannels:
		return fmt.Errorf("--scale-notifications must be 2 to --scale-channels, got %d", c.ScaleNotifications)
	case c.ScaleRate < 1 || c.ScaleRate > 10000:
		return fmt.Errorf("--scale-rate must be 1 to 10000, got %d", c.ScaleRate)
	case c.ScaleIdle < time.Second || c.ScaleIdle > 30*time.Minute:
		return fmt.Errorf("--scale-idle must be 1s to 30m, got %v", c.ScaleIdle)
	case c.HubGC != "" && c.HubGC != server.GCHeap && c.HubGC != server.GCRuntime:
		return fmt.Errorf("--hub-gc must be %s or %s, got %q", server.GCHeap, server.GCRuntime, c.HubGC)
	case c.MemChannels < 1 || c.MemChannels > 100000:
		return fmt.Errorf("--mem-channels must be 1 to 100000, got %d", c.MemChannels)
	case c.MemSubscriptions < c.MemChannels || c.MemSubscriptions > 1000000:
		return fmt.Errorf("--mem-subscriptions must be --mem-channels to 1000000, got %d", c.MemSubscriptions)
	case c.MemRestart && c.MemSubscriptions%c.MemChannels != 0:
		return fmt.Errorf("--mem-restart needs --mem-subscriptions a multiple of --mem-channels, got %d and %d", c.MemSubscriptions, c.MemChannels)
	case c.MemWait < 0 || c.MemWait > 10*time.Minute:
		return fmt.Errorf("--mem-wait must be 0 to 10m, got %v", c.MemWait)
	case c.ClusterChannels < 1 || c.ClusterChannels > 100000:
		return fmt.Errorf("--cluster-channels must be 1 to 100000, got %d", c.ClusterChannels)
	case c.ClusterSubscriptions < c.ClusterChannels || c.ClusterSubscriptions > 1000000:
		return fmt.Errorf("--cluster-subscriptions must be --cluster-channels to 1000000, got %d", c.ClusterSubscriptions)
	case c.ClusterClaimTTL < time.Second || c.ClusterClaimTTL > 10*time.Minute:
		return fmt.Errorf("--cluster-claim-ttl must be 1s to 10m, got %v", c.ClusterClaimTTL)
	case c.ClusterIdle < time.Second || c.ClusterIdle > 10*time.Minute:
		return fmt.Errorf("--cluster-idle must be 1s to 10m, got %v", c.ClusterIdle)
	case c.DurationCap < time.Second || c.DurationCap > time.Hour:
		return fmt.Errorf("--duration-cap must be 1s to 1h, got %v", c.DurationCap)
	}
	return nil
}

// concurrency is the number of webhook deliveries in flight at most, for
// the hub (its per-host limit adapts up to its maximum) and for the
// ceiling alike.
func (c Config) concurrency() int { return min(c.Subscribers, c.Servers*c.perHostMax()) }

// perHostMax is the most deliveries the hub has in flight to one callback
// host.
func (c Config) perHostMax() int { return max(c.PerHost, server.Defaults().PerHostMax) }
