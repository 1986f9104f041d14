package logcache_test

import (
	"context"
	"fmt"

	"github.com/rshub/rshub/hub/logcache"
)

// A cache in front of a log: Run follows the log, readers call Next on the
// cache and wait on its Changed signal.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := newMemLog() // a *jslog.Log in the hub
	c := logcache.New(log, logcache.Config{MaxRecords: 1024})
	ready := c.Changed()
	go func() { _ = c.Run(ctx) }()
	<-ready

	changed := c.Changed()
	seq, _, _ := c.Append(ctx, rec("arxiv", 1))
	<-changed // the cache holds the record now
	r, err := c.Next(ctx, "arxiv", seq)
	fmt.Println(r.Seq, r.Channel, err, c.Stats().Delegated)
	// Output: 1 arxiv <nil> 0
}
