package tracing

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

// jaeger is a Jaeger collector (the tool module tools/jaeger) with an
// OTLP/HTTP receiver and its query API on loopback ports, keeping spans in
// memory.
type jaeger struct {
	otlp  string // OTLP/HTTP base URL, for --otel-endpoint
	query string // query API base URL
}

// jaegerConfig is the collector's configuration: OTLP over HTTP in, memory
// storage, the query API; no other listener.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    enable_tracing: false
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger builds Jaeger once (testproc.BuildTool) and runs it until
// the test ends.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	start := time.Now()
	bin, err := testproc.BuildTool("jaeger", "github.com/jaegertracing/jaeger/cmd/jaeger")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("jaeger binary ready in %s", time.Since(start).Round(time.Second))
	qport, gport, oport := testenv.FreePort(t), testenv.FreePort(t), testenv.FreePort(t)
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, qport, gport, oport), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testproc.Start(t, "jaeger", bin, "--config", cfg)
	j := &jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", oport), query: fmt.Sprintf("http://127.0.0.1:%d", qport)}
	testproc.WaitHTTP(t, p, j.query+"/api/services", 60*time.Second)
	testproc.WaitPort(t, p, oport, 30*time.Second)
	return j
}

// jaegerSpan is a span as the query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

// parent is the span's CHILD_OF reference, "" when it has none.
func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// tag returns the value of the span's tag key, nil when it has none.
func (s jaegerSpan) tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

// trace returns the spans Jaeger holds of the trace id (none while it has
// not received any).
func (j *jaeger) trace(t *testing.T, id string) []jaegerSpan {
	t.Helper()
	resp, err := http.Get(j.query + "/api/traces/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var body struct {
		Data []struct {
			Spans []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/traces/%s: %d %v", id, resp.StatusCode, err)
	}
	var spans []jaegerSpan
	for _, d := range body.Data {
		spans = append(spans, d.Spans...)
	}
	return spans
}
