package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestNew_OffWithoutEndpoint: with no endpoint and no OTEL_EXPORTER_OTLP_*
// variable, tracing is off and tracers are no-ops.
func TestNew_OffWithoutEndpoint(t *testing.T) {
	tr, err := New(context.Background(), Config{Getenv: func(string) string { return "" }})
	if err != nil || tr.Enabled() {
		t.Fatalf("%v %v", tr, err)
	}
	_, span := tr.Tracer("x").Start(context.Background(), "s")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Fatal("a span of tracing that is off records")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestNew_RefusesBadSettings: an endpoint that is not an http(s) URL and a
// sampled share outside (0, 1] are refused.
func TestNew_RefusesBadSettings(t *testing.T) {
	for _, c := range []Config{
		{Endpoint: "127.0.0.1:4318", Sample: 1},
		{Endpoint: "ftp://collector/", Sample: 1},
		{Endpoint: "http://user:pw@collector/", Sample: 1},
		{Endpoint: "http://collector/", Sample: 0},
		{Endpoint: "http://collector/", Sample: 1.5},
	} {
		if _, err := New(context.Background(), c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestNew_ExportsToTheEndpointOrTheEnvironment: spans go, batched, to
// /v1/traces of a base URL given as the endpoint or in
// OTEL_EXPORTER_OTLP_ENDPOINT, at the latest when tracing shuts down.
func TestNew_ExportsToTheEndpointOrTheEnvironment(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	for i, c := range []Config{
		{Endpoint: srv.URL, Sample: 1},
		{Sample: 1, Getenv: func(k string) string {
			if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
				return srv.URL
			}
			return ""
		}},
	} {
		if c.Getenv != nil {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL) // the exporter reads it itself
		}
		tr, err := New(context.Background(), c)
		if err != nil || !tr.Enabled() {
			t.Fatalf("%d: %v", i, err)
		}
		_, span := tr.Tracer("x").Start(context.Background(), "s")
		span.End()
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if posts.Load() != int64(i+1) {
			t.Fatalf("%d: %d exports", i, posts.Load())
		}
	}
}
