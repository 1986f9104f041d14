package delivery

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// spanPost is the span of one webhook delivery attempt.
const spanPost = "rshub.webhook.post"

// startAttempt starts the span of one delivery attempt of rec to sub, a
// child of the record's trace context (the publish's intake). The POST
// carries the span's context (injectTrace). With tracing off (a no-op
// Tracer) it starts nothing, at no cost, and the POST carries the record's
// context as stored.
func (w *Webhooks) startAttempt(ctx context.Context, sub hub.Subscription, rec wire.Record) (context.Context, trace.Span, time.Time) {
	if _, off := w.cfg.Tracer.(noop.Tracer); off {
		return ctx, trace.SpanFromContext(context.Background()), time.Time{} // the shared no-op span
	}
	if rec.TraceParent != "" {
		tc := wire.Record{TraceParent: rec.TraceParent, TraceState: rec.TraceState} // not &rec: rec would escape on every call
		ctx = propagation.TraceContext{}.Extract(ctx, wire.TraceCarrier{Rec: &tc})
	}
	ctx, span := w.cfg.Tracer.Start(ctx, spanPost, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		host, port := serverOf(sub.Callback) // not the URL: its path or query may hold a secret
		span.SetAttributes(attribute.String("rshub.subscription", sub.ID), attribute.String("rshub.channel", rec.Channel),
			attribute.Int64("rshub.seq", int64(rec.Seq)), attribute.String("server.address", host))
		if port > 0 {
			span.SetAttributes(attribute.Int("server.port", port))
		}
	}
	return ctx, span, time.Now()
}

// serverOf is the host (an IPv6 address without brackets) and port of a
// callback, as OpenTelemetry's server.address and server.port name them:
// the port its scheme implies when none is written; 0 when unknown.
func serverOf(callback string) (string, int) {
	u, err := url.Parse(callback)
	if err != nil {
		return "", 0
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return u.Hostname(), 0
		}
		return u.Hostname(), n
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Hostname(), 443
	case "http":
		return u.Hostname(), 80
	}
	return u.Hostname(), 0
}

// endAttempt ends an attempt's span with its status and latency.
func endAttempt(span trace.Span, a attempt, start time.Time) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("http.response.status_code", a.status),
			attribute.Int64("rshub.latency_ms", time.Since(start).Milliseconds()))
		if !a.ok() {
			span.SetStatus(codes.Error, wire.Clip(a.reason()))
		}
	}
	span.End()
}

// injectTrace sets the traceparent and tracestate headers of a delivery
// of rec: from ctx's span, or rec's as stored when ctx has none.
func injectTrace(ctx context.Context, b *headers, rec wire.Record) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(b.h))
		return
	}
	if rec.TraceParent != "" { // canonical keys, set without canonicalising them again
		b.set("Traceparent", rec.TraceParent)
		if rec.TraceState != "" {
			b.set("Tracestate", rec.TraceState)
		}
	}
}
