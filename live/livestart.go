package live

import "context"

// pinLiveStart gives a session that asked for no position (no since,
// since_time or Last-Event-ID) the log's end as its cursor, read before
// the hub answers it: a client that publishes, or has a publisher
// publish, as soon as the stream opens (an EventSource's onopen, a
// WebSocket's open) then receives that update. A session that took its
// position after its headers were flushed missed what came in between.
// A log that does not answer leaves req as it was: replay takes the
// position later, as before.
func (ls *Sessions) pinLiveStart(ctx context.Context, req *wsRequest) {
	if req.hasSince || !req.sinceTime.IsZero() {
		return
	}
	if _, last, err := ls.cfg.Log.Bounds(ctx); err == nil {
		req.since, req.epoch, req.hasSince = last, logEpoch(ls.cfg.Log), true
	}
}
