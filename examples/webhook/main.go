// Command webhook is a minimal WebSub destination built on
// client/subscriber: it discovers a Source's hub and topic (or takes them
// as flags), subscribes its callback with a random secret, keeps the
// subscription alive, prints every change of every verified notification,
// and unsubscribes on Ctrl-C.
//
// With `go run ./cmd/hub --demo` running:
//
//	go run ./examples/webhook --source http://127.0.0.1:8080/
//	go run ./examples/webhook --hub http://127.0.0.1:8080/ --topic http://127.0.0.1:8080/topics/demo
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rshub/rshub/client/subscriber"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	source := flag.String("source", "", "Source (or hub) URL to discover the channel from")
	hub := flag.String("hub", "", "hub URL, with --topic")
	topic := flag.String("topic", "", "topic URI, with --hub")
	listen := flag.String("listen", "127.0.0.1:8091", "callback server address")
	callback := flag.String("callback-url", "", "public callback URL (default http://<listen>/)")
	flag.Parse()
	if *source != "" {
		ch, err := subscriber.Discover(ctx, http.DefaultClient, *source)
		if err != nil {
			return err
		}
		*hub, *topic = ch.Hub, ch.Topic
	}
	if *hub == "" || *topic == "" {
		return errors.New("give --source, or --hub and --topic")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *callback == "" {
		*callback = "http://" + ln.Addr().String() + "/"
	}
	h, err := subscriber.New(subscriber.Config{
		Callback: *callback,
		OnNotification: func(_ context.Context, n *subscriber.Notification) error {
			md := n.Document.MD
			fmt.Printf("notification on %s [%s, %s], signed %v\n", n.Topic, md.From.Raw, md.Until.Raw, n.Signed)
			for _, e := range n.Document.Entries {
				if e.MD != nil {
					fmt.Printf("  %-8s %s %s\n", e.MD.Change, e.Loc, e.MD.Hash)
				}
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	sub, err := h.Subscribe(ctx, *hub, *topic, subscriber.SubscribeOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("subscribed to %s at %s (lease %s); Ctrl-C to stop\n", *topic, *hub, sub.Lease)
	go func() { _ = h.KeepAlive(ctx, sub.ID, 0, nil) }()
	<-ctx.Done()
	uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Unsubscribe(uctx, sub.ID, 10*time.Second); err != nil {
		return err
	}
	fmt.Println("unsubscribed")
	return nil
}
