package server

import (
	"context"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
)

// A new origin log: the origin's data folder was lost and its log created
// again, with a new epoch and sequences from 1. An edge that noticed it
// (the link probe, below, or jslog when it opens the mirror) starts again
// within Run (runOnce): the mirror of the former log is replaced by one
// of the new log (jslog.Log.Replaced), the mirror of the origin's
// channels is rebuilt (the origin's buckets were created again too), and
// every webhook cursor starts again at the new log's start; live sessions
// end with the process and, coming back with an id of the former epoch,
// get the reset the origin gives them. Until then /readyz says so.

// newOriginLog is the cause of an edge's restart on the origin's new log.
type newOriginLog struct{ former, epoch string }

func (e *newOriginLog) Error() string {
	return fmt.Sprintf("the origin's log was created again (epoch %s; this edge served epoch %s): starting again on the new log", e.epoch, e.former)
}

// originEpochEvery is how often the link probe asks the origin for its
// log's epoch while the link is up.
const originEpochEvery = 5 * time.Second

// checkOriginEpoch returns a newOriginLog when the origin's log is not
// the one the edge serves (asked at most every originEpochEvery, at
// now), nil otherwise; last is when it last asked.
func (p *process) checkOriginEpoch(ctx context.Context, now time.Time, last *time.Time) error {
	if r := p.notifications.Replaced(); r != "" && r != p.startReplaced {
		return &newOriginLog{former: r, epoch: p.notifications.Epoch()} // replaced on a reconnection
	}
	if now.Sub(*last) < originEpochEvery {
		return nil
	}
	*last = now
	epoch, err := p.notifications.OriginEpoch(ctx)
	if err != nil || epoch == p.notifications.Epoch() {
		return nil
	}
	return &newOriginLog{former: p.notifications.Epoch(), epoch: epoch}
}

// startOnNewOriginLog, at an edge that starts on a new origin log (the
// mirror replaced when the log opened, or a restart for it), rebuilds the
// mirror of the origin's channels and starts every webhook cursor again
// at the new log's start, before any engine runs.
func (p *process) startOnNewOriginLog(ctx context.Context, ks *kvstore.Store) error {
	former := p.former
	if r := p.notifications.Replaced(); r != "" {
		former = r
	}
	p.startReplaced = p.notifications.Replaced()
	if former == "" {
		return nil
	}
	if err := ks.RebuildOriginChannels(ctx); err != nil {
		return fmt.Errorf("the origin's log was created again: %w", err)
	}
	n, err := restartCursors(ctx, ks)
	if err != nil {
		return fmt.Errorf("the origin's log was created again: starting the webhook cursors again: %w", err)
	}
	p.logger.Warn("started on the origin's new log: the origin's channels mirrored anew, webhook deliveries start again at the new log's start",
		"former_epoch", former, "epoch", p.notifications.Epoch(), "subscriptions", n)
	return nil
}

// restartCursors sets every subscription's delivery cursor to the log's
// start and returns how many there are.
func restartCursors(ctx context.Context, store hub.Store) (int, error) {
	n := 0
	for shard := range hub.Shards {
		subs, err := store.SubscriptionsInShard(ctx, shard)
		if err != nil {
			return n, err
		}
		for _, s := range subs {
			if err := store.PutCursor(ctx, s.ID, hub.Cursor{}); err != nil {
				return n, fmt.Errorf("subscription %s: %w", s.ID, err)
			}
			n++
		}
	}
	return n, nil
}
