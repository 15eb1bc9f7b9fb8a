package capfile_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// export --format otlp: OTLP JSON Lines whose spans have the names and
// the hex ids sent in the requests' _meta, all in the trace of the
// session's --traceparent, and children of export's --traceparent.
func TestExportOTLP(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "fail", "--record", path, "--traceparent", tp})...)
	if r.Code == 0 {
		t.Fatalf("call fail: %d %s", r.Code, r.Stderr)
	}
	capture, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r = clitest.RunSonde(t, "", "export", "--format", "otlp", "--traceparent", tp, path)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("export: %d %s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	var names []string
	for _, line := range lines {
		var req coltracepb.ExportTraceServiceRequest
		// OTLP JSON has hex ids, which protojson (base64) does not read:
		// check them as text, the rest through protojson.
		if err := protojson.Unmarshal([]byte(hexFree(line)), &req); err != nil {
			t.Fatalf("line is not an ExportTraceServiceRequest: %v\n%s", err, line)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "initialize") || !strings.Contains(got, "tools/call fail") {
		t.Errorf("spans %s", got)
	}
	out := r.Stdout
	if strings.Count(out, `"traceId":"0af7651916cd43dd8448eb211c80319c"`) != len(names) || strings.Count(out, `"parentSpanId":"b7ad6b7169203331"`) != len(names) ||
		!strings.Contains(out, `{"key":"error.type","value":{"stringValue":"-32001"}}`) || !strings.Contains(out, `"status":{"message":`) {
		t.Errorf("export lacks the trace, parent or error:\n%s", out)
	}
	// Every span id the export gives a request is the one its _meta sent.
	i := strings.Index(string(capture), `traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-`)
	if i < 0 {
		t.Fatal("the capture has no traceparent")
	}
	sent := string(capture[i+len(`traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-`):][:16])
	if !strings.Contains(out, `"spanId":"`+sent+`"`) {
		t.Errorf("no span has the id %s sent in _meta", sent)
	}
}

// hexIDs are the id members of OTLP JSON, in hex.
var hexIDs = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":"[0-9a-f]*"`)

// hexFree blanks the hex id members, which protojson would read as base64.
func hexFree(line string) string { return hexIDs.ReplaceAllString(line, `"$1":""`) }
