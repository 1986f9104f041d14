package delivery

import (
	"context"
	"net"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

const (
	recordTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	recordTS = "rojo=00f067aa0ba902b7"
)

// publishTraced appends one record with the given trace context.
func (e *env) publishTraced(tp, ts string) {
	e.t.Helper()
	rec := wire.Record{Topic: topic, Channel: "feed", ContentType: "application/xml", Key: tp + "k",
		Body: []byte("<urlset/>"), TraceParent: tp, TraceState: ts}
	if _, _, err := e.log.Append(e.ctx(), rec); err != nil {
		e.t.Fatal(err)
	}
}

// TestWebhooks_TraceContextOnEveryAttempt: every POST of a record,
// retries included, carries its trace context: as stored without a
// tracer; with one, the attempt's own span, a child of the stored context,
// with the status of the answer. A record without one sends none.
func TestWebhooks_TraceContextOnEveryAttempt(t *testing.T) {
	t.Parallel()
	fail500 := func(n int, _ delivery) int {
		if n == 1 {
			return 500
		}
		return 200
	}
	t.Run("no tracer", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.channel(topic, "feed")
		r := newReceiver(t, fail500)
		e.subscribe(topic, r.url("/cb"), "")
		e.publishTraced(recordTP, recordTS)
		e.publishTraced("", "")
		e.start(e.fastConfig())
		testenv.Eventually(t, wait, func() bool { return r.count() == 3 })
		got := r.all()
		for i, d := range got[:2] {
			if d.Header.Get("traceparent") != recordTP || d.Header.Get("tracestate") != recordTS {
				t.Fatalf("attempt %d: traceparent %q tracestate %q", i+1, d.Header.Get("traceparent"), d.Header.Get("tracestate"))
			}
		}
		if h := got[2].Header; h.Get("traceparent") != "" || h.Get("tracestate") != "" {
			t.Fatalf("a record without trace context was sent with %v", h)
		}
	})
	t.Run("tracer", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.channel(topic, "feed")
		r := newReceiver(t, fail500)
		e.subscribe(topic, r.url("/cb"), "")
		e.publishTraced(recordTP, recordTS)
		spans := tracetest.NewSpanRecorder()
		cfg := e.fastConfig()
		cfg.Tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)).Tracer("delivery")
		e.start(cfg)
		testenv.Eventually(t, wait, func() bool { return r.count() == 2 && len(spans.Ended()) == 2 })
		for i, s := range spans.Ended() {
			d := r.all()[i]
			want := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"
			if s.Name() != spanPost || s.Parent().SpanID().String() != recordTP[36:52] || s.SpanContext().TraceID().String() != recordTP[3:35] {
				t.Fatalf("attempt %d: span %s parent %v", i+1, s.Name(), s.Parent())
			}
			if d.Header.Get("traceparent") != want || d.Header.Get("tracestate") != recordTS {
				t.Fatalf("attempt %d: traceparent %q, want %q", i+1, d.Header.Get("traceparent"), want)
			}
			status, failed := 200, false
			if i == 0 {
				status, failed = 500, true
			}
			if !hasAttr(s.Attributes(), attribute.Int("http.response.status_code", status)) || (s.Status().Code == codes.Error) != failed {
				t.Fatalf("attempt %d: attributes %v status %v", i+1, s.Attributes(), s.Status())
			}
			host, port := r.srv.Listener.Addr().(*net.TCPAddr).IP.String(), r.srv.Listener.Addr().(*net.TCPAddr).Port
			if !hasAttr(s.Attributes(), attribute.String("server.address", host)) || !hasAttr(s.Attributes(), attribute.Int("server.port", port)) {
				t.Fatalf("attempt %d: attributes %v, want server.address %s (the host alone) and server.port %d", i+1, s.Attributes(), host, port)
			}
		}
	})
}

// server.address is the callback's host alone, an IPv6 address without
// its brackets; server.port its port, or the one its scheme implies.
func TestServerOf_HostAndPortApart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		callback string
		host     string
		port     int
	}{
		{"http://127.0.0.1:8080/cb?secret=x", "127.0.0.1", 8080},
		{"https://hooks.example/cb", "hooks.example", 443},
		{"http://hooks.example/cb", "hooks.example", 80},
		{"http://[::1]:9000/cb", "::1", 9000},
		{"http://[::1]/cb", "::1", 80},
		{"ftp://x/cb", "x", 0},
		{"http://x:99999/cb", "x", 0},
		{"%zz", "", 0},
	} {
		if h, p := serverOf(c.callback); h != c.host || p != c.port {
			t.Errorf("serverOf(%q) = %q, %d; want %q, %d", c.callback, h, p, c.host, c.port)
		}
	}
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}

// BenchmarkWebhooks_Tracing measures delivery with tracing off (a no-op
// tracer: the record's traceparent is still carried to each POST) and on
// (every attempt recorded and batched to an exporter that drops them).
func BenchmarkWebhooks_Tracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			benchDeliver(b, func(_ *env, cfg *Config) {
				if on {
					tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
					b.Cleanup(func() { _ = tp.Shutdown(b.Context()) })
					cfg.Tracer = tp.Tracer("delivery")
				}
			}, recordTP)
		})
	}
}

// BenchmarkWebhooks_AttemptTracing measures what tracing adds to one
// delivery attempt, the network aside: the span started from the
// record's context, the headers set, the span ended. "none" is a record
// without trace context and tracing off; "off" carries the traceparent
// with a no-op tracer; "on" records and batches every span.
func BenchmarkWebhooks_AttemptTracing(b *testing.B) {
	sub := hub.Subscription{ID: "sub", Callback: "http://127.0.0.1:1/cb"}
	for _, c := range []struct {
		name string
		tp   string
		on   bool
	}{{"none", "", false}, {"off", recordTP, false}, {"on", recordTP, true}} {
		b.Run(c.name, func(b *testing.B) {
			w := &Webhooks{cfg: Config{Tracer: noop.Tracer{}}}
			if c.on {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				w.cfg.Tracer = tp.Tracer("delivery")
			}
			rec := wire.Record{Channel: "feed", Seq: 1, TraceParent: c.tp, TraceState: recordTS}
			b.ReportAllocs()
			for b.Loop() {
				ctx, span, start := w.startAttempt(context.Background(), sub, rec)
				h := newHeaders(maxHeaders)
				injectTrace(ctx, &h, rec)
				endAttempt(span, attempt{status: 200}, start)
			}
		})
	}
}
