package tap_test

import (
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/otlptest"
	"github.com/sonde-mcp/sonde/transport"
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

// sonde tap --listen --otlp-endpoint: the host's requests through the
// HTTP tap are CLIENT spans with the real server's address and port.
func TestListenOTLP(t *testing.T) {
	col := otlptest.Start(t)
	base := clitest.FixtureHTTP(t)
	h := startHTTPTap(t, base+"/mcp", "--no-record", "--otlp-endpoint", col.URL)
	o := driveHTTP(t, h.url, transport.ModeStreamable)
	if o.Echo == "" {
		t.Fatalf("no echo through the tap: %+v", o)
	}
	h.stop(t)
	s := col.Span("tools/call echo")
	if s == nil || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("no CLIENT span tools/call echo among %d\n%s", len(col.Spans()), h.errText())
	}
	u, _ := url.Parse(base)
	if otlptest.Attr(s, "server.address") != u.Hostname() || otlptest.Attr(s, "network.transport") != "tcp" || otlptest.Attr(s, "mcp.session.id") == "" {
		t.Errorf("attributes %v (server %s)", s.Attributes, base)
	}
	var port int64
	for _, a := range s.Attributes {
		if a.Key == "server.port" {
			port = a.Value.GetIntValue()
		}
	}
	if strconv.FormatInt(port, 10) != u.Port() {
		t.Errorf("server.port %d, want %s", port, u.Port())
	}
}
