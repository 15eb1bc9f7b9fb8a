package connect_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// collector is an OTLP/HTTP receiver on a loopback socket: it keeps the
// spans and metric names it is sent, and the header x-key.
type collector struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []string
	keys    []string
}

func newCollector(t *testing.T) (*collector, string) {
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.keys = append(c.keys, r.Header.Get("x-key"))
		switch r.URL.Path {
		case "/v1/traces":
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("traces: %v", err)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					c.spans = append(c.spans, ss.Spans...)
				}
			}
		case "/v1/metrics":
			var req colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Errorf("metrics: %v", err)
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						c.metrics = append(c.metrics, m.Name)
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// A headless command with --otlp-endpoint sends its spans and metrics to
// the collector over OTLP/HTTP, with --otlp-header; --traceparent parents
// them, and the request carried the span's own traceparent in _meta.
func TestOTLPExport(t *testing.T) {
	col, endpoint := newCollector(t)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", clitest.FixtureHTTP(t)+"/mcp",
		"--otlp-endpoint", endpoint, "--otlp-header", "x-key=abc", "--traceparent", tp, "--record", rec)
	if r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	var call *tracepb.Span
	for _, s := range col.spans {
		if s.Name == "tools/call echo" {
			call = s
		}
	}
	if call == nil || call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("no CLIENT span tools/call echo among %d", len(col.spans))
	}
	if hex.EncodeToString(call.ParentSpanId) != "b7ad6b7169203331" || hex.EncodeToString(call.TraceId) != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("parent %x trace %x", call.ParentSpanId, call.TraceId)
	}
	capture, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	sent := `"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-` + hex.EncodeToString(call.SpanId) + `-01\"`
	if !strings.Contains(string(capture), sent) {
		t.Errorf("the capture lacks %s", sent)
	}
	if !strings.Contains(strings.Join(col.metrics, " "), "mcp.client.operation.duration") {
		t.Errorf("metrics %v", col.metrics)
	}
	for _, k := range col.keys {
		if k != "abc" {
			t.Errorf("x-key %q", k)
		}
	}
}

func TestOTLPFlagErrors(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, args := range [][]string{
		{"--otlp-content"},
		{"--otlp-endpoint", "ftp://x"},
		{"--otlp-endpoint", "http://127.0.0.1:1", "--otlp-header", "novalue"},
		{"--traceparent", "00-xyz"},
	} {
		r := clitest.RunSonde(t, "", append([]string{"call", "echo", "--url", "http://127.0.0.1:1/mcp"}, args...)...)
		if r.Code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
	}
}
