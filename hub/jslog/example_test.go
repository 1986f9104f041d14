package jslog_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/wire"
)

// A pipeline author's view: append a notification, then read it back by
// channel from a sequence.
func Example() {
	dir, _ := os.MkdirTemp("", "jslog-example")
	defer os.RemoveAll(dir)
	srv, err := embednats.Start(embednats.Config{DataDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	nc, _ := srv.Connect()
	defer nc.Close()

	ctx := context.Background()
	l, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	seq, _, _ := l.Append(ctx, wire.Record{
		Topic: "https://example.org/changelist.xml", Channel: "example",
		ContentType: "application/xml", Key: "n-1", Body: []byte("<urlset/>"),
	})
	_, dup, _ := l.Append(ctx, wire.Record{Channel: "example", Key: "n-1"})
	rec, _ := l.Next(ctx, "example", 1)
	fmt.Println(l.Subject("example"), seq, dup, rec.Seq, rec.Topic, string(rec.Body))
	// Output: rshub.notify.example 1 true 1 https://example.org/changelist.xml <urlset/>
}
