package capfile_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestJaeger sends a live session and an exported capture to a real Jaeger
// (make peers) over loopback OTLP/HTTP, reads the traces back through its
// query API, and checks names, kinds, attributes, parent/child links and
// error status.
func TestJaeger(t *testing.T) {
	j := peertest.StartJaeger(t)
	t.Setenv("OTEL_METRICS_EXPORTER", "none") // Jaeger takes no metrics

	// Live: a modern session over HTTP under the caller's trace; its
	// tools/call is answered input_required once, then retried.
	const liveTrace, liveParent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	reply := filepath.Join(t.TempDir(), "accept.json")
	if err := os.WriteFile(reply, []byte(`{"action":"accept","content":{"confirm":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clitest.RunSonde(t, "", "call", "confirm", "--era", "modern", "--elicit-reply", reply,
		"--url", clitest.FixtureHTTP(t, "--era", "modern")+"/mcp",
		"--otlp-endpoint", j.OTLP, "--traceparent", "00-"+liveTrace+"-"+liveParent+"-01")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("live: exit %d\n%s", r.Code, r.Stderr)
	}
	spans := j.Trace(t, liveTrace, 4) // server/discover, the operation, its two rounds
	var op *peertest.JaegerSpan
	var rounds []*peertest.JaegerSpan
	for i := range spans {
		s := &spans[i]
		switch {
		case s.OperationName == "server/discover":
			if s.Parent() != liveParent || s.Tag("span.kind") != "client" || s.Tag("mcp.protocol.version") != "2026-07-28" || s.Tag("network.transport") != "tcp" {
				t.Errorf("server/discover: %+v", s)
			}
		case s.OperationName == "tools/call confirm" && s.Tag("sonde.mcp.rounds") == "2":
			op = s
		case s.OperationName == "tools/call confirm":
			rounds = append(rounds, s)
		}
	}
	if op == nil || len(rounds) != 2 {
		t.Fatalf("operation %v, %d rounds, in %+v", op, len(rounds), spans)
	}
	if op.Parent() != liveParent || op.Tag("gen_ai.tool.name") != "confirm" || op.Tag("gen_ai.operation.name") != "execute_tool" ||
		op.Tag("mcp.session.id") != "" || op.Tag("server.address") != "127.0.0.1" || op.Tag("server.port") == "" {
		t.Errorf("operation: %+v", op)
	}
	for _, rs := range rounds {
		if rs.Parent() != op.SpanID {
			t.Errorf("round %s: parent %s, want the operation %s", rs.SpanID, rs.Parent(), op.SpanID)
		}
	}

	// Exported: a stdio session recorded under another trace, whose call
	// fails with a JSON-RPC error, sent later as OTLP JSON.
	const capTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "fail", "--record", path, "--traceparent", "00-" + capTrace + "-00f067aa0ba902b7-01"})...); r.Code == 0 {
		t.Fatalf("call fail: exit 0\n%s", r.Stderr)
	}
	r = clitest.RunSonde(t, "", "export", "--format", "otlp", path)
	if r.Code != 0 {
		t.Fatalf("export: %d %s", r.Code, r.Stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		resp, err := http.Post(j.OTLP+"/v1/traces", "application/json", strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("jaeger took the export with %s", resp.Status)
		}
	}
	spans = j.Trace(t, capTrace, 3) // initialize, notifications/initialized, tools/call fail
	var fail *peertest.JaegerSpan
	for i := range spans {
		if spans[i].OperationName == "tools/call fail" {
			fail = &spans[i]
		}
	}
	if fail == nil {
		t.Fatalf("no tools/call fail in %+v", spans)
	}
	if fail.Tag("error.type") != "-32001" || fail.Tag("rpc.response.status_code") != "-32001" || fail.Tag("otel.status_code") != "ERROR" ||
		fail.Tag("otel.status_description") != "fixture failure" || fail.Tag("span.kind") != "client" || fail.Tag("network.transport") != "pipe" ||
		fail.Tag("jsonrpc.request.id") != "2" || fail.Parent() != "" {
		t.Errorf("tools/call fail: %+v", fail)
	}
	capture, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(capture), capTrace+"-"+fail.SpanID+"-01") {
		t.Errorf("span %s is not the one the request's _meta carried", fail.SpanID)
	}
}
