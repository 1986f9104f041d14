package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
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
}

func (a attempt) ok() bool   { return a.err == nil && a.status >= 200 && a.status < 300 }
func (a attempt) gone() bool { return a.err == nil && a.status == http.StatusGone }

// hostFailure reports whether the attempt says something about the health
// of the callback's host, for its circuit breaker: transport errors, 5xx
// and 429 do; other 4xx concern one callback only.
func (a attempt) hostFailure() bool {
	if a.err != nil {
		return !a.permanent
	}
	return a.status >= 500 || a.status == http.StatusTooManyRequests
}

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

// newRequest builds the POST of rec to sub's callback, exactly as given;
// checked says the callback already passed netguard.CheckURL (the
// addresses it resolves to are checked at dial time, every time).
func (w *Webhooks) newRequest(ctx context.Context, sub hub.Subscription, rec wire.Record, checked bool) (*http.Request, error) {
	if !checked {
		if err := netguard.CheckURL(sub.Callback); err != nil {
			return nil, clipError(err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Callback, bytes.NewReader(rec.Body))
	if err != nil {
		return nil, fmt.Errorf("delivery: callback %s: %w", quote(sub.Callback), err)
	}
	ct := rec.ContentType
	if ct == "" {
		ct = "application/xml"
	}
	req.Header.Set(wire.HeaderContentType, ct)
	req.Header.Set(wire.HeaderLink, w.linkHeader(rec))
	req.Header.Set("User-Agent", "rshub")
	// the hub's cursor for this notification, so a destination can resume
	// over any transport (WebSocket since=, NATS start sequence) from it
	req.Header.Set(wire.HeaderSeq, strconv.FormatUint(rec.Seq, 10))
	injectTrace(ctx, req.Header, rec)
	if err := w.sign(req.Header, sub, rec); err != nil {
		return nil, err
	}
	return req, nil
}

// scheme is the signature scheme of sub's deliveries: the one it asked
// for, else the engine's Config.Scheme, else wire.SchemeWebSub.
func (w *Webhooks) scheme(sub hub.Subscription) string {
	switch {
	case sub.Scheme != "":
		return sub.Scheme
	case w.cfg.Scheme != "":
		return w.cfg.Scheme
	}
	return wire.SchemeWebSub
}

// sign sets the signature headers of a delivery of rec to sub, when sub
// has a secret, by its scheme: X-Hub-Signature (wire.SchemeWebSub), the
// Standard Webhooks headers (wire.SchemeStandard) or both. The webhook-id
// is the same on every attempt of rec to sub (wire.StandardMessageID);
// webhook-timestamp is the time of this attempt, so a retry is fresh
// while a captured attempt goes stale.
func (w *Webhooks) sign(h http.Header, sub hub.Subscription, rec wire.Record) error {
	if sub.Secret == "" {
		return nil
	}
	var websub, standard bool
	switch scheme := w.scheme(sub); scheme {
	case wire.SchemeWebSub:
		websub = true
	case wire.SchemeStandard:
		standard = true
	case wire.SchemeBoth:
		websub, standard = true, true
	default:
		return fmt.Errorf("delivery: unknown signature scheme %s", quote(scheme))
	}
	if websub {
		sig, err := wire.Sign(w.cfg.SigMethod, sub.Secret, rec.Body)
		if err != nil {
			return fmt.Errorf("delivery: %w", err)
		}
		h.Set(wire.HeaderSignature, sig)
	}
	if standard {
		id, now := wire.StandardMessageID(sub.ID, wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq}), w.cfg.Clock()
		sig, err := wire.SignStandard(sub.Secret, id, now, rec.Body)
		if err != nil {
			return fmt.Errorf("delivery: Standard Webhooks signature: %w", err)
		}
		h.Set(wire.HeaderWebhookID, id)
		h.Set(wire.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
		h.Set(wire.HeaderWebhookSignature, sig)
	}
	return nil
}

// post makes one delivery attempt of rec to sub. With grace, a request in
// flight when ctx ends gets cfg.Grace more to finish; without, ctx bounds
// it. An attempt cut short by ctx is abandoned: it has no outcome. checked
// is newRequest's.
func (w *Webhooks) post(ctx context.Context, sub hub.Subscription, rec wire.Record, grace, checked bool) (a attempt) {
	ctx, span, start := w.startAttempt(ctx, sub, rec) // trace.go
	defer func() { endAttempt(span, a, start) }()
	rctx := ctx
	if grace {
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		unhook := context.AfterFunc(ctx, func() {
			sleep(pctx, w.cfg.Grace, nil, nil)
			cancel()
		})
		defer unhook()
		rctx = pctx
	}
	req, err := w.newRequest(rctx, sub, rec, checked)
	if err != nil {
		return attempt{err: err, permanent: true}
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return attempt{err: err, abandoned: true}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return attempt{err: fmt.Errorf("delivery: POST %s: %w", wire.Clip(sub.Callback), err)}
	}
	a = attempt{status: resp.StatusCode}
	if !a.ok() {
		a.detail = readDetail(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	if a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable {
		a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return a
}
