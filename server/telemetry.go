package server

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/rshub/rshub/internal/telemetry"
)

// tracingFlush bounds how long a hub that stops waits to export the spans
// still queued.
const tracingFlush = 5 * time.Second

// buildTracing sets up tracing (internal/telemetry): OTLP export with
// --otel-endpoint or the OTEL_EXPORTER_OTLP_* variables, a no-op tracer
// otherwise. The engines take their tracers from p.tracing. With tracing
// on it also routes the OpenTelemetry SDK's errors, process-wide, through
// the hub's logger (otel.SetErrorHandler: global state of the otel
// package, which every hub of one process then shares).
func (p *process) buildTracing(ctx context.Context) error {
	t, err := telemetry.New(ctx, telemetry.Config{Endpoint: p.cfg.OTelEndpoint, Sample: p.cfg.OTelSample})
	if err != nil {
		return err
	}
	p.tracing = t
	if t.Enabled() {
		// The SDK's errors (a collector unreachable) go through the hub's
		// logger, JSON with --log-format json. The handler is the
		// process's, global to it: set here, where one process is wired.
		otel.SetErrorHandler(telemetry.ErrorHandler(p.logger))
		p.logger.Info("tracing: exporting spans over OTLP", "sample", p.cfg.OTelSample)
		p.onClose(func() {
			ctx, cancel := context.WithTimeout(context.Background(), tracingFlush)
			defer cancel()
			if err := t.Shutdown(ctx); err != nil {
				p.logger.Warn("tracing: spans not exported at shutdown", "err", err)
			}
		})
	}
	return nil
}
