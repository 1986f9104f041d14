package live_test

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

const recordTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestLive_FramesCarryTraceContextAndSendsAreSpans: a notification frame
// carries its record's trace context, live and replayed, on WebSockets
// and Server-Sent Events; each live send is a span under the record's.
func TestLive_FramesCarryTraceContextAndSendsAreSpans(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("live")
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{Tracer: tracer}})
	ws := e.mustDial(query("channels", "feed"))
	if m := read(t, ws); m.Type != wire.FrameLive {
		t.Fatalf("first frame %+v", m)
	}
	sse := e.mustOpenEvents(query("channels", "feed"), nil)
	if ev := sse.next(); ev.Type != wire.EventLive {
		t.Fatalf("first event %+v", ev)
	}
	rec := hubtest.Record("feed", 1)
	rec.TraceParent, rec.TraceState = recordTP, "rojo=1"
	seq := e.append(rec)
	replayed := e.mustDial(query("channels", "feed", "since", "0"))
	for name, m := range map[string]wsMsg{"websocket": read(t, ws), "sse": sse.until(seq)[0].msg, "replay": read(t, replayed)} {
		if m.Seq != seq || m.TraceParent != recordTP || m.TraceState != "rojo=1" {
			t.Fatalf("%s frame: seq %d traceparent %q tracestate %q", name, m.Seq, m.TraceParent, m.TraceState)
		}
	}
	testenv.Eventually(t, wsTimeout, func() bool { return len(spans.Ended()) >= 2 })
	transports := map[string]bool{}
	for _, s := range spans.Ended() {
		if s.Name() != "rshub.live.send" || s.Parent().SpanID().String() != recordTP[36:52] || s.SpanContext().TraceID().String() != recordTP[3:35] {
			t.Fatalf("span %s parent %v", s.Name(), s.Parent())
		}
		for _, a := range s.Attributes() {
			if a.Key == "rshub.transport" {
				transports[a.Value.AsString()] = true
			}
		}
	}
	if !transports["websocket"] || !transports["sse"] {
		t.Fatalf("send spans of %v", transports)
	}
}
