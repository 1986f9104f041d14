package jslog

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// watcher turns appends by any writer into calls of notify. It reads the
// stream with an ordered, headers-only consumer that starts at new
// messages: the server delivers a message to it only once the stream has
// stored it, so a waiter woken by Changed always finds the record with
// Next. (A core subscription on the subjects would see a publish before the
// stream stored it and could wake a waiter too early, losing the wake-up.)
// The ordered consumer recreates itself when nats.go reconnects; a new
// connection gets a new watcher.
type watcher struct {
	cc     jetstream.ConsumeContext
	seen   func(seq uint64)
	notify func()
}

func startWatcher(ctx context.Context, js jetstream.JetStream, stream, filter string, seen func(uint64), notify func()) (*watcher, error) {
	w := &watcher{seen: seen, notify: notify}
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		HeadersOnly:    true,
	})
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	w.cc, err = cons.Consume(w.handle)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	return w, nil
}

// handle runs on the consumer's goroutine; it never blocks on readers.
func (w *watcher) handle(m jetstream.Msg) {
	if md, err := m.Metadata(); err == nil {
		w.seen(md.Sequence.Stream)
	}
	w.notify()
}

func (w *watcher) stop() {
	w.cc.Stop()
}
