package hub

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/wire"
)

// Span names of the hub's intake (docs/usage.md, Tracing).
const (
	spanIntake   = "rshub.intake"   // one publish request: parse, validate, commit
	spanValidate = "rshub.validate" // parsing and validating a fat ping's body
	spanCommit   = "rshub.commit"   // continuity and the append to the log
	spanFetch    = "rshub.fetch"    // a thin ping's fetch of the topic
)

// startIntake starts the intake span of a publish request of the given
// kind (fat or thin ping), a child of the W3C trace context the Source
// sent (traceparent, tracestate); a malformed one is ignored.
func (h *Hub) startIntake(r *http.Request, kind string) (context.Context, trace.Span) {
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return h.cfg.Tracer.Start(ctx, spanIntake, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rshub.publish", kind)))
}

// startCommit starts the commit span, a child of the caller's span, the
// intake of a publish request or a follower's poll; with none, as for the
// framework notifications the hub composes by itself when a channel comes
// or goes (hub/pull, PublishFramework), it starts none, rather than a lone
// trace of one span.
func (h *Hub) startCommit(ctx context.Context) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx) // a no-op span: ctx has none
	}
	return h.cfg.Tracer.Start(ctx, spanCommit)
}

// endSpan ends span, marking it failed with err when err is not nil.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, wire.Clip(err.Error()))
	}
	span.End()
}

// traceRecord stores the trace context of ctx's span in rec, so every
// delivery of rec continues the publish's trace; rec keeps none when ctx
// has none.
func traceRecord(ctx context.Context, rec *wire.Record) {
	propagation.TraceContext{}.Inject(ctx, wire.TraceCarrier{Rec: rec})
}
