package tap_test

import (
	"encoding/hex"
	"os"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/otlptest"
)

// sonde tap --otlp-endpoint: the host's requests become the CLIENT spans
// the host would emit, parented on the traceparent the host put in
// _meta, which reaches the server untouched; with --no-record too.
func TestTapOTLP(t *testing.T) {
	col := otlptest.Start(t)
	fx := clitest.NewFixture(t)
	const hostTrace, hostSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := `{"jsonrpc":"2.0","id":"h2","method":"tools/call","params":{"name":"echo","arguments":{"value":"_meta"},"_meta":{"traceparent":"00-` + hostTrace + `-` + hostSpan + `-01"}}}`
	h := startHost(t, nil, append([]string{os.Args[0], "tap", "--no-record", "--otlp-endpoint", col.URL, "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.write(initialized, call)
	h.await(`"id":"h2"`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 || h.stderr() != "" {
		t.Fatalf("tap: exit %d\n%s", code, h.stderr())
	}
	s := col.Span("tools/call echo")
	if s == nil || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("no CLIENT span tools/call echo among %d", len(col.Spans()))
	}
	if hex.EncodeToString(s.TraceId) != hostTrace || hex.EncodeToString(s.ParentSpanId) != hostSpan || otlptest.Attr(s, "jsonrpc.request.id") != "h2" {
		t.Errorf("span trace %x parent %x attrs %v", s.TraceId, s.ParentSpanId, s.Attributes)
	}
	if col.Span("initialize") == nil || !strings.Contains(h.stdoutText(), `"value":"_meta"`) {
		t.Errorf("no initialize span, or the call was not answered:\n%s", h.stdoutText())
	}
}
