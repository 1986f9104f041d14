package delivery

import (
	"context"
	"sync"
	"time"
)

// requester is the context of the POSTs one goroutine makes for the
// queues it runs, one after the other, reused from one POST to the next
// instead of a new one (and a timer) per POST: a delivery on a runner
// (hostLimit.runner) that goes from queue to queue makes a context only
// after one was cancelled. A POST's context is never cancelled by the
// queue's: only by its timeout (the sender's, by a timer of the
// requester's, reset per POST) or by stop, cfg.Grace after (cut), as a
// context.WithoutCancel child of the queue's would. It keeps the values of
// the context it was first made under, the engine's.
//
// begin and end are the owning goroutine's; cut may come from any.
type requester struct {
	mu     sync.Mutex
	ctx    context.Context // nil until a POST needs one, and after it was cancelled
	cancel context.CancelFunc
	timer  *time.Timer // cancels ctx when a POST takes longer than its timeout; nil with none
	gen    uint64      // counts the POSTs begun; a cut names the one it is for
	active bool        // a POST is in flight
}

// begin returns the context of a POST about to be made, bounded by
// timeout (0: none), made under parent's values when one has to be made,
// and the POST's number for cut.
func (r *requester) begin(parent context.Context, timeout time.Duration) (context.Context, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.ctx == nil:
		r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(parent))
		if timeout > 0 {
			r.timer = time.AfterFunc(timeout, r.cancel)
		}
	case r.timer != nil:
		r.timer.Reset(timeout) // stopped by end
	}
	r.gen++
	r.active = true
	return r.ctx, r.gen
}

// end ends the POST begun last. Its context is kept for the next one
// unless it was cancelled or its timer fired meanwhile.
func (r *requester) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active = false
	if (r.timer != nil && !r.timer.Stop()) || r.ctx.Err() != nil {
		r.dropLocked()
	}
}

// inFlight returns the number of the POST in flight, if one is.
func (r *requester) inFlight() (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, r.active
}

// cut cancels POST n if it is still in flight.
func (r *requester) cut(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active && r.gen == n {
		r.cancel()
	}
}

// close lets go of the context once the goroutine is done with r.
func (r *requester) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx != nil {
		if r.timer != nil {
			r.timer.Stop()
		}
		r.dropLocked()
	}
}

func (r *requester) dropLocked() {
	r.cancel()
	r.ctx, r.cancel, r.timer = nil, nil, nil
}
