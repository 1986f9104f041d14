package natsconn_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
)

// A Conn on an embedded server: someone closes its connection, and the
// Conn dials a new one by itself.
func Example() {
	dir, _ := os.MkdirTemp("", "natsconn-example")
	defer os.RemoveAll(dir)
	srv, err := embednats.Start(embednats.Config{DataDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := natsconn.New(ctx, natsconn.Config{Dial: srv.Dial})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Wait(ctx); err != nil {
		fmt.Println(err)
		return
	}
	nc, gen := c.Current()
	fmt.Println("generation", gen)

	changed := c.Changed()
	nc.Close()
	<-changed // the close was noticed
	if err := c.Wait(ctx); err != nil {
		fmt.Println(err)
		return
	}
	err = c.Do(ctx, func(_ context.Context, nc *nats.Conn, gen uint64) error {
		fmt.Println("generation", gen)
		return nc.Flush()
	})
	fmt.Println("flush:", err)
	// Output:
	// generation 1
	// generation 2
	// flush: <nil>
}
