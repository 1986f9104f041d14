package follow

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestFollower_EachPollStartsItsOwnTrace: a poll is the root span of a
// trace of its own, whatever its caller's context holds, and what it
// publishes is published in it.
func TestFollower_EachPollStartsItsOwnTrace(t *testing.T) {
	r := newRig(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	r.e.cfg.Tracer = tp.Tracer("follow")
	ctx, outer := tp.Tracer("test").Start(context.Background(), "outer")
	defer outer.End()
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, ""}))
	r.src.set("/1.xml", cl(t0, "", "a@"+t1))
	f := r.follower()
	timing := Timing{Interval: time.Second, MaxBackoff: time.Minute, MaxWait: time.Minute}
	f.turn(ctx, timing)
	r.src.set("/1.xml", cl(t0, "", "a@"+t1, "b@"+t2))
	f.turn(ctx, timing)
	polls := spans.Ended()
	if len(polls) != 2 || len(r.hub.traces) != 2 {
		t.Fatalf("%d spans, %d publishes", len(polls), len(r.hub.traces))
	}
	for i, s := range polls {
		if s.Name() != "rshub.follow.poll" || s.Parent().IsValid() || s.SpanContext().TraceID() == outer.SpanContext().TraceID() {
			t.Fatalf("poll %d: span %s with parent %v", i, s.Name(), s.Parent())
		}
		if !r.hub.traces[i].Equal(s.SpanContext()) {
			t.Fatalf("poll %d published in %v, not in its span %v", i, r.hub.traces[i], s.SpanContext())
		}
	}
	if polls[0].SpanContext().TraceID() == polls[1].SpanContext().TraceID() {
		t.Fatal("two polls share a trace")
	}
}
