package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/rshub/rshub/internal/testenv"
)

// lockedBuffer is a bytes.Buffer safe for the SDK's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An exporter whose collector refuses its spans reports the error through
// the hub's logger: with a JSON logger, a JSON line at warn naming it, and
// nothing else on the line (the SDK's default handler prints plain text).
// The handler is the otel package's global one, as the process sets it
// (server.buildTracing); the test puts the previous one back.
func TestErrorHandler_ExportErrorsAreTheHubsLogLines(t *testing.T) {
	var logs lockedBuffer
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(ErrorHandler(slog.New(slog.NewJSONHandler(&logs, nil))))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // export every 20 ms, not 5 s
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no spans here", http.StatusBadRequest) // not retried by the exporter
	}))
	t.Cleanup(srv.Close)
	tr, err := New(context.Background(), Config{Endpoint: srv.URL, Sample: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Tracer("x").Start(context.Background(), "s")
	span.End()
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(logs.String(), "tracing: the OpenTelemetry SDK failed") }, "the export error logged")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tr.Shutdown(ctx)
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line that is not JSON: %q", line)
		}
		if e, _ := rec["err"].(string); rec["level"] != "WARN" || !strings.Contains(e, "400") {
			t.Errorf("log line %v, want a warning with the exporter's error", rec)
		}
	}
}
