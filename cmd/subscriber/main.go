// Command subscriber keeps a local directory exactly in step with a
// ResourceSync Source through an rshub hub: it discovers the hub and topic
// from the Source (or takes them as flags), subscribes a callback with a
// random secret and renews it (or consumes the hub's WebSocket or NATS
// stream), applies every change notification to the mirror directory, and
// heals gaps from the hub's pull-mode Change Lists. In dataset mode
// (--dataset DIR) it keeps RDF datasets instead, Timbuctoo-style: it lists
// a Source's datasets with their titles, builds one (or all) from the
// .nqud patches of its Change List or the dataset file of its Resource
// List, and applies every new patch the hub announces. `subscriber
// --help` lists every setting. The logic lives in client/mirror,
// client/dataset and client/subscriber; this command wires them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "subscriber:", err)
		os.Exit(1)
	}
}
