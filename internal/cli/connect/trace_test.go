package connect

import (
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// TestTraceRetryOf: --trace names the request a modern retry continues.
func TestTraceRetryOf(t *testing.T) {
	t0 := time.Now()
	ev := client.Event{Time: t0, Kind: client.EvRequest, Req: &client.ReqInfo{
		Dir: transport.Out, ID: jsonrpc.Int(3), Method: "tools/call", Tool: "confirm", State: client.StateResolved,
		Latency: time.Millisecond, RetryOf: jsonrpc.Int(2)}}
	if line := describeEvent(ev, t0); !strings.Contains(line, "tools/call confirm") || !strings.HasSuffix(line, "resolved after 1.0ms (retry of id 2)") {
		t.Errorf("line %q", line)
	}
	ev.Req.RetryOf = jsonrpc.ID{}
	if line := describeEvent(ev, t0); strings.Contains(line, "retry of") {
		t.Errorf("line %q", line)
	}
}
