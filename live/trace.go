package live

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rshub/rshub/wire"
)

// spanSend is the span of writing one live notification frame to a session.
const spanSend = "rshub.live.send"

// sendTraced runs write, the write of rec's notification frame, in a span
// that is a child of rec's trace context (the publish's intake), when
// the sessions have a Tracer (not a no-op one) and rec has a trace
// context. The frame itself carries rec's context either way
// (notificationJSON).
func (s *session) sendTraced(rec *wire.Record, write func() error) error {
	tracer := s.ls.cfg.Tracer
	if _, off := tracer.(noop.Tracer); off || tracer == nil || rec.TraceParent == "" {
		return write()
	}
	ctx := propagation.TraceContext{}.Extract(s.ctx, wire.TraceCarrier{Rec: rec})
	_, span := tracer.Start(ctx, spanSend, trace.WithSpanKind(trace.SpanKindProducer))
	err := write()
	if span.IsRecording() {
		transport := "websocket"
		if _, ok := s.out.(*sseConn); ok {
			transport = "sse"
		}
		span.SetAttributes(attribute.String("rshub.transport", transport), attribute.String("rshub.channel", rec.Channel),
			attribute.Int64("rshub.seq", int64(rec.Seq)))
		if err != nil {
			span.SetStatus(codes.Error, wire.Clip(err.Error()))
		}
	}
	span.End()
	return err
}
