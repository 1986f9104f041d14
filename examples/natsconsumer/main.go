// Command natsconsumer is a pipeline consumer of the hub's NATS interface
// with plain nats.go: it replays a channel's notifications from the hub's
// JetStream stream, starting after a log sequence, and follows live,
// printing each notification's window and entries (read from the stored
// XML with encoding/xml). Of rshub it needs only package wire, the
// protocol: the stream, the subjects and the headers.
//
// The hub's NATS server lets a client read only with the read user's
// credentials (docs/usage.md, "NATS and /metrics"). With
// `go run ./cmd/hub --demo --nats-password-file pw` (embedded NATS on
// 127.0.0.1:4222, the read user's password in the file pw):
//
//	go run ./examples/natsconsumer --nats-url "nats://reader:$(cat pw)@127.0.0.1:4222" --channel demo
//	go run ./examples/natsconsumer --nats-url "nats://reader:$(cat pw)@127.0.0.1:4222" --channel demo --since 42
//
// or, with `--nats-anonymous-read` on the hub, without credentials.
package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/wire"
)

// urlset is the part of a change notification this consumer reads.
type urlset struct {
	URLs []struct {
		Loc string `xml:"loc"`
		MD  struct {
			Change string `xml:"change,attr"`
		} `xml:"md"`
	} `xml:"url"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "natsconsumer:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	url := flag.String("nats-url", nats.DefaultURL, "NATS server of the hub, with the read user's credentials: nats://reader:<password>@host:4222")
	stream := flag.String("stream", wire.Stream, "the hub's JetStream stream")
	channel := flag.String("channel", "demo", "channel name")
	since := flag.Uint64("since", 0, "replay after this log sequence (0: from the start)")
	flag.Parse()

	nc, err := nats.Connect(*url, nats.MaxReconnects(-1))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{wire.Subject(wire.SubjectPrefix, *channel)}}
	if *since > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, *since+1
	}
	c, err := js.OrderedConsumer(ctx, *stream, cfg)
	if err != nil {
		return err
	}
	cc, err := c.Consume(func(m jetstream.Msg) {
		md, _ := m.Metadata()
		h := m.Headers()
		topic, err := wire.DecodeHeaderValue(h.Get(wire.HeaderTopic)) // non-ASCII travels as an RFC 2047 word
		if err != nil {
			topic = h.Get(wire.HeaderTopic)
		}
		fmt.Printf("seq %d  %s  [%s, %s]\n", md.Sequence.Stream, topic, h.Get(wire.HeaderFrom), h.Get(wire.HeaderUntil))
		var doc urlset
		if err := xml.Unmarshal(m.Data(), &doc); err != nil {
			fmt.Printf("  (not XML: %v)\n", err)
			return
		}
		for _, u := range doc.URLs {
			fmt.Printf("  %-8s %s\n", u.MD.Change, u.Loc)
		}
	})
	if err != nil {
		return err
	}
	defer cc.Stop()
	fmt.Printf("consuming %s on %s from %s; Ctrl-C to stop\n", cfg.FilterSubjects[0], *stream, *url)
	<-ctx.Done()
	return ctx.Err()
}
