package hub_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

const (
	sourceTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sourceTS = "rojo=00f067aa0ba902b7"
)

// traced returns a fixture option giving the hub a tracer that records
// every span, and the recorder.
func traced() (fixtureOpt, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	return func(c *hub.Config) { c.Tracer = tp.Tracer("hub") }, rec
}

// spanNamed returns the one ended span called name.
func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	return spanNamedAfter(t, rec, name, 0)
}

// spanNamedAfter returns the one span called name among those ended after
// the first n.
func spanNamedAfter(t *testing.T, rec *tracetest.SpanRecorder, name string, n int) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended()[n:] {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %s", len(found), name)
	}
	return found[0]
}

// parseTP reads a stored traceparent back as a span context.
func parseTP(t *testing.T, tp string) trace.SpanContext {
	t.Helper()
	if len(tp) != 55 {
		t.Fatalf("traceparent %q", tp)
	}
	tid, err1 := trace.TraceIDFromHex(tp[3:35])
	sid, err2 := trace.SpanIDFromHex(tp[36:52])
	if err1 != nil || err2 != nil {
		t.Fatalf("traceparent %q: %v %v", tp, err1, err2)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid})
}

// storedRecord returns the channel's first record.
func storedRecord(t *testing.T, f *fixture, channel string) wire.Record {
	t.Helper()
	rec, err := f.Log.Next(context.Background(), channel, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestIntake_TraceContextStoredWithTheRecord: without a tracer the
// Source's traceparent and tracestate are stored as sent; with one, the
// record holds the intake span, a child of the Source's span, in the
// Source's trace, with the validate and commit spans under it.
func TestIntake_TraceContextStoredWithTheRecord(t *testing.T) {
	t.Run("no tracer", func(t *testing.T) {
		f := newFixture(t)
		ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
		if s, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL), "traceparent", sourceTP, "tracestate", sourceTS); s != 200 {
			t.Fatalf("%d %q", s, resp)
		}
		if r := storedRecord(t, f, ch.Name); r.TraceParent != sourceTP || r.TraceState != sourceTS {
			t.Fatalf("stored %q %q", r.TraceParent, r.TraceState)
		}
	})
	t.Run("tracer", func(t *testing.T) {
		opt, spans := traced()
		f := newFixture(t, opt)
		ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
		if s, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL), "traceparent", sourceTP, "tracestate", sourceTS); s != 200 {
			t.Fatalf("%d %q", s, resp)
		}
		r := storedRecord(t, f, ch.Name)
		stored := parseTP(t, r.TraceParent)
		intake := spanNamed(t, spans, "rshub.intake")
		source := parseTP(t, sourceTP)
		if intake.Parent().SpanID() != source.SpanID() || intake.SpanContext().TraceID() != source.TraceID() {
			t.Fatalf("intake span %v is not a child of the Source's %v", intake.Parent(), source)
		}
		if stored.SpanID() != intake.SpanContext().SpanID() || stored.TraceID() != source.TraceID() || r.TraceState != sourceTS {
			t.Fatalf("stored %q %q, intake span %v", r.TraceParent, r.TraceState, intake.SpanContext())
		}
		for _, name := range []string{"rshub.validate", "rshub.commit"} {
			if s := spanNamed(t, spans, name); s.Parent().SpanID() != intake.SpanContext().SpanID() {
				t.Fatalf("%s is not under the intake span", name)
			}
		}
	})
}

// TestIntake_MalformedTraceparentIsDropped: a traceparent that is not
// well-formed is never stored; without a tracer the record has no trace
// context, with one the intake starts a trace of its own.
func TestIntake_MalformedTraceparentIsDropped(t *testing.T) {
	// two hubs, without and with a tracer; each case has a channel of its own
	plain := newFixture(t)
	opt, spans := traced()
	withTracer := newFixture(t, opt)
	for i, bad := range []string{
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", // zero trace id
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",    // no flags
		"<script>alert(1)</script>",
	} {
		t.Run("no tracer", func(t *testing.T) {
			f := plain.in(t)
			ch := f.Channel(hub.Channel{Topic: openTopic + strconv.Itoa(i), Trust: hub.TrustOpen})
			if s, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL), "traceparent", bad, "tracestate", sourceTS); s != 200 {
				t.Fatalf("%d %q", s, resp)
			}
			if r := storedRecord(t, f, ch.Name); r.TraceParent != "" || r.TraceState != "" {
				t.Fatalf("%q stored as %q %q", bad, r.TraceParent, r.TraceState)
			}
		})
		t.Run("tracer", func(t *testing.T) {
			f := withTracer.in(t)
			ch := f.Channel(hub.Channel{Topic: openTopic + strconv.Itoa(i), Trust: hub.TrustOpen})
			ended := len(spans.Ended())
			if s, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL), "traceparent", bad); s != 200 {
				t.Fatalf("%d %q", s, resp)
			}
			r := storedRecord(t, f, ch.Name)
			intake := spanNamedAfter(t, spans, "rshub.intake", ended)
			if intake.Parent().IsValid() || parseTP(t, r.TraceParent).SpanID() != intake.SpanContext().SpanID() {
				t.Fatalf("%q: intake parent %v, stored %q", bad, intake.Parent(), r.TraceParent)
			}
		})
	}
}

// TestThinPing_TraceContextAndFetchSpan: a thin ping's traceparent is
// stored with what the fetch found, and the fetch has its span under the
// intake span.
func TestThinPing_TraceContextAndFetchSpan(t *testing.T) {
	opt, spans := traced()
	f := newFixture(t, opt)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("news"))
	}))
	t.Cleanup(src.Close)
	ch := f.Channel(hub.Channel{Topic: src.URL + "/topic", Trust: hub.TrustOpen})
	if s, resp := f.PostForm(url.Values{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}, "traceparent", sourceTP); s != 200 {
		t.Fatalf("%d %q", s, resp)
	}
	r := storedRecord(t, f, ch.Name)
	intake, fetch := spanNamed(t, spans, "rshub.intake"), spanNamed(t, spans, "rshub.fetch")
	if fetch.Parent().SpanID() != intake.SpanContext().SpanID() || parseTP(t, r.TraceParent).TraceID() != parseTP(t, sourceTP).TraceID() {
		t.Fatalf("fetch parent %v, intake %v, stored %q", fetch.Parent(), intake.SpanContext(), r.TraceParent)
	}
}

// A commit made within a traced request or poll is a child of its span; a
// framework notification the hub composes by itself (a channel created by
// a subscribe to a new open topic, hub/pull) has no request behind it and
// exports no span: no lone parentless rshub.commit trace.
func TestCommit_SpanOnlyUnderItsCallersSpan(t *testing.T) {
	opt, spans := traced()
	f := newFixture(t, opt)
	f.Channel(hub.Channel{Name: "a", Topic: "http://127.0.0.1:1/a/change/", Trust: hub.TrustOpen})
	note := func(loc string) hub.FrameworkNotification {
		return hub.FrameworkNotification{Topic: hub.FrameworkTopic(f.URL, "a"), Entries: 1,
			Body: []byte(fwPayload("changelist", "created") + "<!-- " + loc + " -->")}
	}
	if _, err := f.Hub.PublishFramework(context.Background(), note("alone")); err != nil {
		t.Fatal(err)
	}
	for _, s := range spans.Ended() {
		if s.Name() == "rshub.commit" {
			t.Fatalf("a commit with no caller's span exported span %s (parent %v)", s.Name(), s.Parent())
		}
	}
	tp := sdktrace.NewTracerProvider()
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := f.Hub.PublishFramework(ctx, note("traced")); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if c := spanNamed(t, spans, "rshub.commit"); c.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("commit span's parent %v, want the caller's %v", c.Parent(), parent.SpanContext())
	}
}
