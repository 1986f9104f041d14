package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// maxDrain bounds how much of a response body is read (and ignored) so the
// connection can be reused.
const maxDrain = 64 << 10

// attempt is the outcome of one POST.
type attempt struct {
	status    int             // HTTP status, 0 when no response
	err       error           // transport error or refusal, nil when a response came
	permanent bool            // retrying cannot help (bad callback URL)
	abandoned bool            // the engine stopped before an outcome
	detail    *responseDetail // of a response other than 2xx, for the attempt log
	// retryAfter is the Retry-After of a 429 or 503, bounded; 0 when none.
	retryAfter time.Duration
	// ownPressure is set on a 429, 503 or timeout judged its callback's
	// alone (isolate.go): it says nothing of its host's capacity.
	ownPressure bool
}

func (a attempt) ok() bool   { return a.err == nil && a.status >= 200 && a.status < 300 }
func (a attempt) gone() bool { return a.err == nil && a.status == http.StatusGone }

// reason is the human-readable cause of a failed attempt.
func (a attempt) reason() string {
	if a.err != nil {
		return a.err.Error()
	}
	return fmt.Sprintf("callback answered %d %s", a.status, http.StatusText(a.status))
}

// linkMemo is the Link header of the last topic delivered, which every
// delivery of a fan-out shares.
type linkMemo struct{ topic, resourcesync, header string }

// linkHeader is the single Link header of a delivery of rec.
func (w *Webhooks) linkHeader(rec wire.Record) string {
	if m := w.link.Load(); m != nil && m.topic == rec.Topic && m.resourcesync == rec.ResourceSync {
		return m.header
	}
	h := wire.NotificationLinks(rec.Topic, w.cfg.HubURL, rec.ResourceSync)
	w.link.Store(&linkMemo{topic: rec.Topic, resourcesync: rec.ResourceSync, header: h})
	return h
}

// post makes one delivery attempt of rec to sub, at the target *t when it
// is still sub's callback, else at sub's callback checked and parsed anew
// (kept in *t once a request went out). With a queue, whose context ctx
// is, the request goes through the requester of the goroutine running q
// (requester.go), and one in flight when q stops gets cfg.Grace more to
// finish (queue.cutInFlight); without, ctx bounds it. An attempt cut short
// by ctx is abandoned: it has no outcome.
func (w *Webhooks) post(ctx context.Context, q *queue, t **target, sub hub.Subscription, rec wire.Record) (a attempt) {
	ctx, span, start := w.startAttempt(ctx, sub, rec) // trace.go
	defer func() { endAttempt(span, a, start) }()
	to, err := targetOf(*t, sub.Callback)
	if err != nil {
		return attempt{err: err, permanent: true}
	}
	var rctx context.Context
	var sc *scratch // the requester's request, when this POST is built in it
	if q != nil {
		var r *requester
		rctx, r = q.beginPost(ctx)
		defer r.end()
		if !start.IsZero() { // tracing: the POST carries the attempt's span
			rctx = trace.ContextWithSpan(rctx, span)
		} else {
			sc = r.scratch()
		}
	} else {
		var cancel context.CancelFunc
		rctx, cancel = w.send.context(ctx)
		defer cancel()
	}
	req, err := w.newRequest(rctx, to, sub, rec, sc) // request.go
	if err != nil {
		return attempt{err: err, permanent: true}
	}
	sent := time.Now()
	resp, err := w.send.do(req)
	if err != nil {
		if ctx.Err() != nil {
			return attempt{err: err, abandoned: true}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if timedOut(err) || errors.Is(err, context.Canceled) { // the request's own timeout: ctx is live
			err = timeoutError{after: w.send.spent(time.Since(sent))}
		}
		return attempt{err: fmt.Errorf("delivery: POST %s: %w", wire.Clip(sub.Callback), err)}
	}
	*t = to
	a = attempt{status: resp.StatusCode}
	if !a.ok() {
		a.detail = readDetail(resp)
	}
	if resp.Body != http.NoBody {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	}
	_ = resp.Body.Close()
	if a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable {
		a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return a
}

// beginPost begins a POST of q, whose context ctx is, through the
// requester of the goroutine running q, and returns its context and the
// requester, to end it. A POST begun once q is stopped gets cfg.Grace,
// as one in flight then (cutInFlight).
func (q *queue) beginPost(ctx context.Context) (context.Context, *requester) {
	r := q.rq
	rctx, n := r.begin(q.parent, q.w.send.requestTimeout())
	if ctx.Err() != nil {
		r.cutAfter(q.w.cfg.Grace, n)
	}
	return rctx, r
}

// cutInFlight gives q's POST in flight, if any, cfg.Grace more, then
// cancels it; q is stopped. A POST made after this sees q's context
// cancelled and does the same (post). q's POSTs go through the requester
// of the goroutine running q (q.rq), which runs no other queue meanwhile.
func (q *queue) cutInFlight() {
	q.mu.Lock()
	r := q.rq
	var n uint64
	var active bool
	if r != nil {
		n, active = r.inFlight()
	}
	q.mu.Unlock()
	if active {
		r.cutAfter(q.w.cfg.Grace, n)
	}
}

// sender sends the requests of deliveries. When the client follows no
// redirect and keeps no cookies, as netguard.NewClient's, a request goes
// straight to its transport under the client's timeout, which is all
// http.Client would add, and not its copy of the headers, its second
// context and timer; otherwise through the client. A transport that
// waits for response headers with a timer of its own
// (ResponseHeaderTimeout) is used as a copy without it, and that wait
// bounds the request's context instead, when it is the shorter: one
// timer per attempt instead of two, and no timer in the transport's wait
// for the answer. An attempt so has the shorter of the two in all
// (netguard's defaults: 10 s), from its start to the end of reading the
// answer.
type sender struct {
	client  *http.Client
	rt      http.RoundTripper // nil: through client
	timeout time.Duration     // of a request sent to rt; 0: none
}

func newSender(c *http.Client) sender {
	if c.Jar != nil || c.CheckRedirect == nil {
		return sender{client: c}
	}
	probe := &http.Request{URL: &url.URL{}, Header: http.Header{}}
	if err := c.CheckRedirect(probe, []*http.Request{probe}); !errors.Is(err, http.ErrUseLastResponse) {
		return sender{client: c}
	}
	rt, timeout := c.Transport, c.Timeout
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok && t.ResponseHeaderTimeout > 0 {
		if timeout <= 0 || t.ResponseHeaderTimeout < timeout {
			timeout = t.ResponseHeaderTimeout
		}
		t = t.Clone()
		t.ResponseHeaderTimeout = 0
		rt = t
	}
	return sender{client: c, rt: rt, timeout: timeout}
}

// context is the context of a request under parent: bounded by the
// client's timeout when the request goes straight to the transport.
func (s sender) context(parent context.Context) (context.Context, context.CancelFunc) {
	if d := s.requestTimeout(); d > 0 {
		return context.WithTimeout(parent, d)
	}
	return context.WithCancel(parent)
}

// requestTimeout is what bounds a request's context: the client's timeout
// when the request goes straight to the transport, else none (0).
func (s sender) requestTimeout() time.Duration {
	if s.rt != nil {
		return s.timeout
	}
	return 0
}

// spent is how long a request that timed out after took, as its error
// says it: the request's limit when it ran to it (a busy machine notices
// the timer late, and the subscriber was given exactly the limit), else
// the time it took (a dial that timed out sooner).
func (s sender) spent(took time.Duration) time.Duration {
	limit := s.timeout
	if s.rt == nil {
		limit = s.client.Timeout
	}
	if limit > 0 && took > limit {
		return limit
	}
	return took
}

func (s sender) do(req *http.Request) (*http.Response, error) {
	if s.rt != nil {
		return s.rt.RoundTrip(req)
	}
	return s.client.Do(req)
}
