// Package telemetry sets up the hub's OpenTelemetry tracing: an OTLP/HTTP
// exporter behind a batching span processor and a parent-based ratio
// sampler when an endpoint is configured, a no-op tracer provider (near
// zero cost) when none is. It is the only package that imports the
// OpenTelemetry SDK; the engines take a trace.Tracer and use the API only.
package telemetry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracesPath is the OTLP/HTTP path of traces, added to an endpoint given
// without a path.
const tracesPath = "/v1/traces"

// Config says where traces go.
type Config struct {
	// Endpoint is the OTLP/HTTP collector: a base URL (http://host:4318,
	// to which /v1/traces is added) or the full URL of its traces
	// endpoint. Empty uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT; with none of them tracing is off. The
	// exporter reads the other OTEL_EXPORTER_OTLP_* variables (headers,
	// timeout, compression, certificates) itself.
	Endpoint string
	// Sample is the share of new traces recorded, in (0, 1]; a trace
	// whose parent came with a publish follows the parent's decision.
	Sample float64
	// Service is the service.name of the spans (OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override it).
	Service string
	// Getenv reads the environment; default os.Getenv.
	Getenv func(string) string
}

// Tracing is a process's tracer provider. The zero value and a Tracing
// made without an endpoint trace nothing.
type Tracing struct {
	provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // nil when tracing is off
}

// New returns the tracing cfg asks for: an exporting provider when an
// endpoint is configured, a no-op one otherwise.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if cfg.Endpoint == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return &Tracing{}, nil
	}
	if cfg.Sample <= 0 || cfg.Sample > 1 {
		return nil, fmt.Errorf("telemetry: the sampled share must be in (0, 1], got %g", cfg.Sample)
	}
	var opts []otlptracehttp.Option
	if cfg.Endpoint != "" {
		u, err := endpointURL(cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	service := cfg.Service
	service = cmp.Or(service, "rshub")
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	sdk := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp), // spans are exported off the hot path, dropped when the queue is full
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Sample))),
		sdktrace.WithResource(res),
	)
	return &Tracing{provider: sdk, sdk: sdk}, nil
}

// endpointURL checks an --otel-endpoint and adds the traces path to a base
// URL.
func endpointURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", errors.New("telemetry: the OTLP endpoint must be an http(s) URL such as http://127.0.0.1:4318")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = tracesPath
	}
	return u.String(), nil
}

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t != nil && t.sdk != nil }

// Tracer returns the tracer of one engine, named after it; a no-op tracer
// when tracing is off. Starting a span from a no-op tracer still carries
// the parent's context on, so trace headers pass through unchanged.
func (t *Tracing) Tracer(name string) trace.Tracer {
	if !t.Enabled() {
		return noop.Tracer{}
	}
	return t.provider.Tracer("github.com/rshub/rshub/" + name)
}

// Shutdown exports the spans still queued and stops the exporter, within
// ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}
