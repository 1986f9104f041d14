package delivery

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/wire"
)

// requester is the context of the POSTs one goroutine makes for the
// queues it runs, one after the other, and the request they are built in
// (scratch), reused from one POST to the next instead of new ones (and a
// timer) per POST: a delivery on a runner
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
	// sc is the request the POSTs are built in while ctx lasts, made at
	// the first that wants it; the owning goroutine's only.
	sc *scratch
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
	if r.sc != nil {
		if r.sc.wrote.Load() {
			r.sc.release()
		} else { // answered before it was written, or not at all: the transport may read it still
			r.sc = nil
		}
	}
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

// scratch returns the request to build the POST begun last in (request.go),
// bound to its context.
func (r *requester) scratch() *scratch {
	if r.sc == nil {
		r.sc = newScratch(r.ctx)
	}
	return r.sc
}

// cut cancels POST n if it is still in flight.
func (r *requester) cut(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active && r.gen == n {
		r.cancel()
	}
}

// cutAfter cuts POST n grace from now, if it is still in flight then.
func (r *requester) cutAfter(grace time.Duration, n uint64) {
	time.AfterFunc(grace, func() { r.cut(n) })
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
	r.ctx, r.cancel, r.timer, r.sc = nil, nil, nil, nil
}

// scratch is the request a requester's POSTs are built in, one after the
// other (Webhooks.newRequest): a request bound to the requester's context
// (so no copy of it per POST to set that), its header map and array and
// its body's reader. It is reused only once the transport has written the
// POST before whole (wrote, set by its httptrace.ClientTrace), and the
// body of its answer is closed: a callback that answers before reading
// the request, or a POST that got no answer, leaves the transport holding
// the request, and the next POST is built in a new scratch
// (requester.end).
type scratch struct {
	req     *http.Request
	hdr     headers
	body    bytes.Reader
	rc      io.ReadCloser // io.NopCloser(&body): the transport knows it in memory
	raw     []byte        // the body of the POST, for getBody
	getBody func() (io.ReadCloser, error)
	wrote   atomic.Bool // the transport is done writing the POST
	signer  wire.Signer // the signatures of the POSTs
}

func newScratch(ctx context.Context) *scratch {
	s := &scratch{hdr: reusableHeaders()}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		// the transport's last touch of the request (Request.write)
		WroteRequest: func(httptrace.WroteRequestInfo) { s.wrote.Store(true) },
	})
	s.req = (&http.Request{Method: http.MethodPost, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}).WithContext(ctx)
	s.rc = io.NopCloser(&s.body)
	s.getBody = func() (io.ReadCloser, error) { // to send it again on a fresh connection
		return io.NopCloser(bytes.NewReader(s.raw)), nil
	}
	return s
}

// request returns the scratch's request, set to POST raw to t with the
// header h.
func (s *scratch) request(t *target, h http.Header, raw []byte) *http.Request {
	s.wrote.Store(false)
	req := s.req
	req.URL, req.Host, req.Header, req.ContentLength = t.url, t.url.Host, h, int64(len(raw))
	if len(raw) > 0 {
		s.raw = raw
		s.body.Reset(raw)
		req.Body, req.GetBody = s.rc, s.getBody
	} else {
		req.Body, req.GetBody = http.NoBody, noBody
	}
	return req
}

// release lets go of the last POST's body.
func (s *scratch) release() {
	s.raw = nil
	s.body.Reset(nil)
}
