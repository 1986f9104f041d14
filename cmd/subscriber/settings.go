package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/internal/config"
	"github.com/rshub/rshub/wire"
)

// envPrefix prefixes every setting's environment variable.
const envPrefix = "RSHUB_SUBSCRIBER_"

// settings is every knob of the subscriber.
type settings struct {
	Source            string
	Hub               string
	Topic             string
	Channel           string
	HubCapabilityList string
	ResourceList      string
	Mirror            string
	State             string
	BaseURL           string
	Transport         string
	Listen            string
	CallbackURL       string
	Lease             time.Duration
	UnsubscribeOnExit bool
	KeepSubscription  bool // overrides UnsubscribeOnExit
	WSToken           string
	NATSURL           string
	NATSStream        string
	NATSPrefix        string
	Resync            time.Duration
	JSON              bool
	Progress          string
	LogLevel          string
	ConfigFile        string
	FilterPrefixes    listFlag
	FilterChange      string
	Filter            changefeed.Filter // from FilterPrefixes and FilterChange, by check
	Dataset           string
	DatasetName       string
	AllDatasets       bool
	ListDatasets      bool
	DataSetFile       string
	Export            string
	NoFollow          bool
	Atom              string        // Atom mode: the feed's subscription document
	AtomInterval      time.Duration // Atom mode: between harvests; 0 harvests once
	Framework         bool          // also follow the framework channel (framework.go)
}

const intro = `subscriber keeps a local directory in step with a ResourceSync Source
through an rshub hub: created and updated resources are fetched and checked
(length, md5, sha-256), deleted ones removed; gaps are filled from the hub's
Change Lists; a state file lets a restart resume.

  subscriber --source http://source.example/ --mirror ./mirror --callback-url https://me.example/callback
  subscriber --hub http://127.0.0.1:8080/ --topic http://127.0.0.1:8080/topics/demo --mirror ./m --transport websocket
  subscriber --source http://source.example/ --mirror ./docs --filter-prefix http://source.example/docs/

Dataset mode (--dataset DIR) keeps RDF datasets instead, the way
Timbuctoo imports them: each Capability List of the Source is one
dataset, described by its describedby document (its title is shown).
A dataset is built by applying the .nqud patches of its Change List in
order, or loaded from the dataset file of its Resource List; then every
new patch the hub announces is fetched, checked and applied. DIR holds
the dataset as sorted N-Quads (dataset.nq), a journal of the patches
since, the fetched patches and the state, so a restart resumes.

  subscriber --source http://source.example/ --list-datasets
  subscriber --source http://source.example/ --dataset ./ds --dataset-name clusius --transport websocket
  subscriber --source http://source.example/ --dataset ./all --all --no-follow

With --filter-prefix or --filter-change the mirror holds only the matching
resources; each notification still moves it through its whole window, so
gaps are still found. A mirror directory made with one filter refuses
another.

Every setting is a flag, an environment variable, or a key of the JSON file
given with --config (in that order of precedence).

Settings:
`

// parseSettings reads flags, then the environment, then the config file.
func parseSettings(args []string, lookup func(string) (string, bool), out io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("subscriber", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&s.Source, "source", "", "Source URL to discover the hub and topic from: a site (its /.well-known/resourcesync), a Source Description, a Capability List or a topic URL")
	fs.StringVar(&s.Hub, "hub", "", "hub URL (instead of --source, with --topic)")
	fs.StringVar(&s.Topic, "topic", "", "topic URI (instead of --source, with --hub)")
	fs.StringVar(&s.Channel, "channel", "", "the hub's channel name for WebSocket and NATS (default: from the hub's Capability List URL)")
	fs.StringVar(&s.HubCapabilityList, "hub-capability-list", "", "the hub's pull-mode Capability List of the topic (default: found in the hub's Source Description)")
	fs.StringVar(&s.ResourceList, "resource-list", "", "the Source's Resource List for the initial baseline (default: from the Source's Capability List; \"off\" to use the hub's Change Lists)")
	fs.StringVar(&s.Mirror, "mirror", "", "the local mirror directory (required)")
	fs.StringVar(&s.State, "state", "", "state file recording how far the mirror has applied (default <mirror>.rshub-state.json)")
	fs.StringVar(&s.BaseURL, "base-url", "", "URL prefix of the mirrored resources: a loc's rest below it is its path in the mirror (default: host/path)")
	fs.StringVar(&s.Transport, "transport", "webhook", "how notifications arrive: webhook, websocket, sse (Server-Sent Events, through proxies that refuse WebSockets) or nats")
	fs.StringVar(&s.Listen, "listen", "127.0.0.1:8090", "webhook: where the callback server listens (host:port)")
	fs.StringVar(&s.CallbackURL, "callback-url", "", "webhook: the public URL of the callback server, as the hub reaches it (default http://<listen>/callback)")
	fs.DurationVar(&s.Lease, "lease", 0, "webhook: lease to ask for (0: the hub's default); renewed after three quarters of it")
	fs.BoolVar(&s.UnsubscribeOnExit, "unsubscribe-on-exit", true, "webhook: unsubscribe when stopped, so that the hub keeps no subscription failing to reach a stopped subscriber; a restart catches up from the hub's Change Lists")
	fs.BoolVar(&s.KeepSubscription, "keep-subscription", false, "webhook: leave the subscription on the hub when stopped (the hub retries its deliveries until a restart on the same --callback-url takes them, or its lease ends); overrides --unsubscribe-on-exit")
	fs.StringVar(&s.WSToken, "ws-token", "", "websocket and sse: token the hub's WebSocket and Server-Sent Events endpoints require")
	fs.StringVar(&s.NATSURL, "nats-url", "nats://127.0.0.1:4222", "nats: the NATS server holding the hub's log stream")
	fs.StringVar(&s.NATSStream, "nats-stream", wire.Stream, "nats: the hub's JetStream stream")
	fs.StringVar(&s.NATSPrefix, "nats-prefix", wire.SubjectPrefix, "nats: the hub's subject prefix")
	fs.DurationVar(&s.Resync, "resync", 5*time.Minute, "catch up from the hub's Change Lists this often, healing a lost last notification (0: never)")
	fs.BoolVar(&s.JSON, "json", false, "print one JSON object per event on standard output, for scripts")
	fs.StringVar(&s.Progress, "progress", "auto", "catch-up progress: bar, lines, or auto (a bar on a terminal)")
	fs.StringVar(&s.LogLevel, "log-level", "warn", "log level on standard error: debug, info, warn or error")
	fs.Var(&s.FilterPrefixes, "filter-prefix", "mirror only the resources whose loc starts with this `prefix` (a URI prefix); repeatable or comma-separated. Webhook: sent to the hub as rshub.filter.prefix; websocket: as the session's prefix parameter; nats: applied here (subjects carry every entry). Applied here for every transport and to catch-ups too")
	fs.StringVar(&s.FilterChange, "filter-change", "", "mirror only these changes: comma-separated created, updated, deleted; sent and applied like --filter-prefix (rshub.filter.change, change)")
	fs.StringVar(&s.Dataset, "dataset", "", "dataset mode: keep the Source's RDF dataset in this directory (instead of --mirror)")
	fs.StringVar(&s.DatasetName, "dataset-name", "", "dataset mode: which dataset, by name (its Capability List's directory), title or Capability List URL (default: the only one)")
	fs.BoolVar(&s.AllDatasets, "all", false, "dataset mode: import every dataset, each in <dataset>/<name>; webhooks listen on --listen's port plus the dataset's index")
	fs.BoolVar(&s.ListDatasets, "list-datasets", false, "list the Source's datasets (name, title, Capability List, how it is imported) and exit")
	fs.StringVar(&s.DataSetFile, "dataset-file", "", "dataset mode: the dataset file of a Resource List holding several (its URL or file name)")
	fs.StringVar(&s.Export, "export", "", "dataset mode: write the dataset as sorted N-Quads to this file after the import and when stopped (\"-\": standard output)")
	fs.BoolVar(&s.NoFollow, "no-follow", false, "dataset mode: import, then exit instead of following notifications")
	fs.StringVar(&s.Atom, "atom", "", "Atom mode: harvest this Atom-PMH feed (a hub's /channels/<name>/feed.atom) into --mirror instead of subscribing")
	fs.DurationVar(&s.AtomInterval, "atom-interval", time.Minute, "Atom mode: time between harvests; 0 harvests once and exits")
	addFrameworkFlag(fs, &s)
	fs.StringVar(&s.ConfigFile, "config", "", "JSON file of settings (keys are these flag names)")
	fs.Usage = config.Usage(fs, envPrefix, intro)
	if err := config.Parse(fs, envPrefix, args, lookup, &s.ConfigFile); err != nil {
		return s, err
	}
	if err := s.check(); err != nil {
		return s, err
	}
	// the hub's own rule: a prefix the hub would refuse is refused here
	var changes []string
	if s.FilterChange != "" {
		changes = []string{s.FilterChange}
	}
	f, err := changefeed.ParseFilter(s.FilterPrefixes, changes)
	if err != nil {
		return s, fmt.Errorf("--filter-prefix / --filter-change: %w", err)
	}
	s.Filter = f
	return s, nil
}

// unsubscribeOnExit says whether a webhook subscription ends when the
// subscriber stops: by default, unless --keep-subscription.
func (s settings) unsubscribeOnExit() bool { return s.UnsubscribeOnExit && !s.KeepSubscription }

// listFlag is a flag given several times or as a comma-separated list (as
// an environment variable or a config file list is).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set adds the comma-separated values of v.
func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// nothingToDo is the answer to a subscriber started with no mode.
const nothingToDo = `say what to keep in step, and where from:
  --mirror DIR --source URL     the files of a Source (URL: the Source's site, its Source Description,
                                a Capability List, a topic, or the hub itself: run "go run ./cmd/hub --demo"
                                and give --source http://127.0.0.1:8080/)
  --mirror DIR --hub URL --topic URI
  --dataset DIR --source URL    RDF datasets of a Source (--list-datasets to see them)
  --atom FEED --mirror DIR      harvest a hub's Atom feed (/channels/<name>/feed.atom)
--transport webhook (default), websocket, sse or nats; --help lists every setting`

// validTransport reports whether t names a transport the subscriber has.
func validTransport(t string) bool {
	switch t {
	case "webhook", "websocket", "sse", "nats":
		return true
	}
	return false
}

// check refuses incomplete or contradictory settings.
func (s settings) check() error {
	switch {
	case s.Atom != "":
		return s.checkAtom()
	case s.ListDatasets || s.Dataset != "":
		return s.checkDataset()
	case s.Mirror == "" && s.Source == "" && s.Hub == "":
		return errors.New(nothingToDo)
	case s.Mirror == "":
		return fmt.Errorf("--mirror DIR is required: the directory to keep in step (or --dataset DIR for RDF datasets, --atom FEED for an Atom harvest)")
	case s.Source == "" && (s.Hub == "" || s.Topic == ""):
		return fmt.Errorf("give --source URL (a Source or a hub: its channels are discovered), or both --hub and --topic")
	case !validTransport(s.Transport):
		return fmt.Errorf("--transport must be webhook, websocket, sse or nats, got %q", s.Transport)
	case s.Progress != "auto" && s.Progress != "bar" && s.Progress != "lines":
		return fmt.Errorf("--progress must be auto, bar or lines, got %q", s.Progress)
	case s.Resync < 0 || s.Lease < 0:
		return fmt.Errorf("--resync and --lease must not be negative")
	}
	return nil
}

// checkDataset checks the settings of dataset mode.
func (s settings) checkDataset() error {
	switch {
	case s.Source == "":
		return fmt.Errorf("dataset mode needs --source (a URL to discover the datasets from)")
	case s.Mirror != "" && s.Dataset != "":
		return fmt.Errorf("give --mirror or --dataset, not both")
	case s.AllDatasets && s.DatasetName != "":
		return fmt.Errorf("give --all or --dataset-name, not both")
	case !validTransport(s.Transport):
		return fmt.Errorf("--transport must be webhook, websocket, sse or nats, got %q", s.Transport)
	case s.Progress != "auto" && s.Progress != "bar" && s.Progress != "lines":
		return fmt.Errorf("--progress must be auto, bar or lines, got %q", s.Progress)
	case len(s.FilterPrefixes) > 0 || s.FilterChange != "":
		return fmt.Errorf("--filter-prefix and --filter-change do not apply to datasets: a dataset is imported whole")
	case s.Lease < 0:
		return fmt.Errorf("--lease must not be negative")
	}
	return nil
}
