package connect_test

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/otlptest"
)

// A headless command with --otlp-endpoint sends its spans and metrics to
// the collector over OTLP/HTTP, with --otlp-header; --traceparent parents
// them, and the request carried the span's own traceparent in _meta.
func TestOTLPExport(t *testing.T) {
	col := otlptest.Start(t)
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", clitest.FixtureHTTP(t)+"/mcp",
		"--otlp-endpoint", col.URL, "--otlp-header", "x-key=abc", "--traceparent", tp, "--record", rec)
	if r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	call := col.Span("tools/call echo")
	if call == nil || call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("no CLIENT span tools/call echo among %d", len(col.Spans()))
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
	if !strings.Contains(strings.Join(col.Metrics(), " "), "mcp.client.operation.duration") {
		t.Errorf("metrics %v", col.Metrics())
	}
	for _, h := range col.Headers() {
		if k := h.Get("x-key"); k != "abc" {
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
		// A header that cannot be sent: refused at the start, not at
		// every export.
		{"--otlp-endpoint", "http://127.0.0.1:1", "--otlp-header", "k=a\r\nX-Injected: 1"},
		{"--otlp-endpoint", "http://127.0.0.1:1", "--otlp-header", "bad name=v"},
		{"--traceparent", "00-xyz"},
	} {
		r := clitest.RunSonde(t, "", append([]string{"call", "echo", "--url", "http://127.0.0.1:1/mcp"}, args...)...)
		if r.Code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
	}
}
