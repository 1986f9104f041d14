package telemetry

import (
	"log/slog"

	"go.opentelemetry.io/otel"
)

// ErrorHandler returns the handler of the OpenTelemetry SDK's own errors
// (an exporter that cannot reach its collector, a full span queue): each
// is logged by logger, at warn, so that with --log-format json they are
// JSON lines like every other, not the plain text lines the SDK's default
// handler prints. The process installs it with otel.SetErrorHandler
// (server.buildTracing): that handler is global to the process.
func ErrorHandler(logger *slog.Logger) otel.ErrorHandler {
	return otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: the OpenTelemetry SDK failed", "err", err)
	})
}
