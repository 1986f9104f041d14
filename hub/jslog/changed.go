package jslog

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// watcher turns appends by any writer into closed channels. It reads the
// stream with an ordered, headers-only consumer that starts at new
// messages: the server delivers a message to it only once the stream has
// stored it, so a waiter woken by Changed always finds the record with
// Next. (A core subscription on the subjects would see a publish before the
// stream stored it and could wake a waiter too early, losing the wake-up.)
type watcher struct {
	mu   sync.Mutex
	ch   chan struct{}
	cc   jetstream.ConsumeContext
	seen func(seq uint64)
}

func startWatcher(ctx context.Context, js jetstream.JetStream, stream, filter string, seen func(uint64)) (*watcher, error) {
	w := &watcher{ch: make(chan struct{}), seen: seen}
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

// notify closes the current channel and replaces it.
func (w *watcher) notify() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

func (w *watcher) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *watcher) stop() {
	w.cc.Stop()
}
