package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// Building a delivery's POST. A queue keeps its callback parsed (target),
// and each request is built as a struct with its headers in one map over
// one array of values, rather than by http.NewRequest and Header.Set,
// which parse the URL and allocate a slice per header on every delivery.

// target is a callback URL that passed netguard.CheckURL, parsed once for
// every delivery to it (the addresses it resolves to are checked at dial
// time, every time). It is never modified once made: requests share it.
type target struct {
	callback string
	url      *url.URL
}

// targetOf returns t when it is callback's, else callback checked and
// parsed.
func targetOf(t *target, callback string) (*target, error) {
	if t != nil && t.callback == callback {
		return t, nil
	}
	if err := netguard.CheckURL(callback); err != nil {
		return nil, clipError(err)
	}
	u, err := url.Parse(callback)
	if err != nil {
		return nil, fmt.Errorf("delivery: callback %s: %w", quote(callback), err)
	}
	u.Host = strings.TrimSuffix(u.Host, ":") // an empty port, as http.NewRequest drops it
	return &target{callback: callback, url: u}, nil
}

// maxHeaders is how many headers a delivery sets at most: Content-Type,
// Link, User-Agent, Rshub-Seq, traceparent, tracestate, X-Hub-Signature
// and the three Standard Webhooks headers.
const maxHeaders = 10

// headers is a request's header map whose values share one array.
// Reused from one request to the next (reusableHeaders), it keeps the
// keys it set: the next request sets its own over them and deletes those
// it does not set (done), where emptying the map each time cost more
// than setting it. A key set at the same place in the array as by the
// request before is not set in the map again: the map's value already is
// that place. A request sets each key once.
type headers struct {
	h    http.Header
	vals []string
	// keys set since reset, and those of the request before; nil when
	// not reused
	keys, last []string
}

// newHeaders makes room for n headers: a map sized for at most 8 is one
// group of slots, a third of one sized for maxHeaders.
func newHeaders(n int) headers {
	return headers{h: make(http.Header, n), vals: make([]string, 0, n)}
}

// reusableHeaders makes room for the headers of requests built one after
// the other in it (reset, set, done).
func reusableHeaders() headers {
	b := newHeaders(maxHeaders)
	b.keys, b.last = make([]string, 0, maxHeaders), make([]string, 0, maxHeaders)
	return b
}

// reset readies b for the headers of another request, keeping its map,
// whose keys the request replaces (done), and its array.
func (b *headers) reset() {
	b.last, b.keys = b.keys, b.last[:0]
	clear(b.vals)
	b.vals = b.vals[:0]
}

// set sets the header of canonical name key to v.
func (b *headers) set(key, v string) {
	i, was := len(b.vals), cap(b.vals)
	b.vals = append(b.vals, v)
	if b.keys == nil {
		b.h[key] = b.vals[i : i+1 : i+1]
		return
	}
	switch {
	case cap(b.vals) != was: // the array moved: point the map at the new one
		for j, k := range b.keys {
			b.h[k] = b.vals[j : j+1 : j+1]
		}
		b.h[key] = b.vals[i : i+1 : i+1]
	case i >= len(b.last) || b.last[i] != key:
		b.h[key] = b.vals[i : i+1 : i+1]
	}
	b.keys = append(b.keys, key)
}

// done deletes the headers of the request before that this one, reusing
// b, did not set.
func (b *headers) done() {
	for _, k := range b.last {
		if !slices.Contains(b.keys, k) {
			delete(b.h, k)
		}
	}
}

// Canonical names of the headers a delivery sets.
var (
	keyContentType      = http.CanonicalHeaderKey(wire.HeaderContentType)
	keyLink             = http.CanonicalHeaderKey(wire.HeaderLink)
	keySeq              = http.CanonicalHeaderKey(wire.HeaderSeq)
	keySignature        = http.CanonicalHeaderKey(wire.HeaderSignature)
	keyWebhookID        = http.CanonicalHeaderKey(wire.HeaderWebhookID)
	keyWebhookTimestamp = http.CanonicalHeaderKey(wire.HeaderWebhookTimestamp)
	keyWebhookSignature = http.CanonicalHeaderKey(wire.HeaderWebhookSignature)
)

// newRequest builds the POST of rec to t, sub's callback, under ctx: in
// sc when one is given, whose request is bound to ctx (requester.go),
// else in a request of its own.
func (w *Webhooks) newRequest(ctx context.Context, t *target, sub hub.Subscription, rec wire.Record, sc *scratch) (*http.Request, error) {
	var b headers
	if sc != nil {
		sc.hdr.reset()
		b = sc.hdr
	} else {
		b = newHeaders(w.headerCount(ctx, sub, rec))
	}
	ct := rec.ContentType
	if ct == "" {
		ct = "application/xml"
	}
	b.set(keyContentType, ct)
	b.set(keyLink, w.linkHeader(rec))
	b.set("User-Agent", "rshub")
	// the hub's cursor for this notification, so a destination can resume
	// over any transport (WebSocket since=, NATS start sequence) from it
	b.set(keySeq, strconv.FormatUint(rec.Seq, 10))
	injectTrace(ctx, &b, rec)
	var sg *wire.Signer
	if sc != nil {
		sg = &sc.signer
	}
	err := w.sign(&b, sub, rec, sg)
	if sc != nil {
		b.done()
		sc.hdr = b
	}
	if err != nil {
		return nil, err
	}
	if sc != nil {
		return sc.request(t, b.h, rec.Body), nil
	}
	req := &http.Request{
		Method: http.MethodPost, URL: t.url, Host: t.url.Host, Header: b.h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		ContentLength: int64(len(rec.Body)),
	}
	// io.NopCloser of a *bytes.Reader: the transport knows it in memory
	// and writes headers and body in one go
	if raw := rec.Body; len(raw) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.GetBody = func() (io.ReadCloser, error) { // to send it again on a fresh connection
			return io.NopCloser(bytes.NewReader(raw)), nil
		}
	} else {
		req.Body = http.NoBody
		req.GetBody = noBody
	}
	return req.WithContext(ctx), nil
}

// noBody is the GetBody of a request without a body.
func noBody() (io.ReadCloser, error) { return http.NoBody, nil }

// headerCount is how many headers newRequest sets at most.
func (w *Webhooks) headerCount(ctx context.Context, sub hub.Subscription, rec wire.Record) int {
	n := 4 // Content-Type, Link, User-Agent, Rshub-Seq
	if trace.SpanContextFromContext(ctx).IsValid() || rec.TraceParent != "" {
		n += 2 // traceparent, tracestate
	}
	if sub.Secret != "" {
		switch w.scheme(sub) {
		case wire.SchemeWebSub:
			n++
		case wire.SchemeStandard:
			n += 3
		default:
			n += 4
		}
	}
	return n
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
// while a captured attempt goes stale. sg, when not nil, is the
// goroutine's signer, whose state the signatures reuse.
func (w *Webhooks) sign(b *headers, sub hub.Subscription, rec wire.Record, sg *wire.Signer) error {
	if sub.Secret == "" {
		return nil
	}
	if sg == nil {
		sg = new(wire.Signer)
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
		sig, err := sg.Sign(w.cfg.SigMethod, sub.Secret, rec.Body)
		if err != nil {
			return fmt.Errorf("delivery: %w", err)
		}
		b.set(keySignature, sig)
	}
	if standard {
		id, now := wire.StandardMessageID(sub.ID, wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq}), w.cfg.Clock()
		sig, err := sg.SignStandard(sub.Secret, id, now, rec.Body)
		if err != nil {
			return fmt.Errorf("delivery: Standard Webhooks signature: %w", err)
		}
		b.set(keyWebhookID, id)
		b.set(keyWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
		b.set(keyWebhookSignature, sig)
	}
	return nil
}
