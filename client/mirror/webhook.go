package mirror

import (
	"context"
	"errors"
	"time"

	"github.com/rshub/rshub/client/subscriber"
)

// ErrBusy is returned to a webhook delivery when the update queue stays
// full: the handler answers 503 and the hub retries later.
var ErrBusy = errors.New("mirror: busy catching up; retry later")

// Enqueue returns a subscriber.Config.OnNotification function that queues
// each delivery on updates for Run, waiting at most wait for room.
func Enqueue(updates chan<- Update, wait time.Duration) func(context.Context, *subscriber.Notification) error {
	return func(ctx context.Context, n *subscriber.Notification) error {
		u := UpdateOf(n.Document, 0, "webhook")
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case updates <- u:
			return nil
		case <-t.C:
			return ErrBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
