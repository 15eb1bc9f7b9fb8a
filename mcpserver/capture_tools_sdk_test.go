package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// agent is a real Go SDK client driving `sonde mcp` over stdio: the test
// binary re-executed as sonde, as a host launches it.
type agent struct {
	t  *testing.T
	cs *sdk.ClientSession

	mu      sync.Mutex
	updated []string      // URIs of notifications/resources/updated, in order
	grew    chan struct{} // a notification came
}

// startAgent runs sonde mcp with args and env (KEY=VALUE) and connects
// the SDK's client to it; the session is closed, and the process gone,
// when the test ends.
func startAgent(t *testing.T, env []string, args ...string) *agent {
	t.Helper()
	a := &agent{t: t, grew: make(chan struct{}, 1)}
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			a.mu.Lock()
			a.updated = append(a.updated, req.Params.URI)
			a.mu.Unlock()
			select {
			case a.grew <- struct{}{}:
			default:
			}
		},
	})
	mcpArgs := []string{"mcp"}
	for _, kv := range clitest.ChildEnv() { // what a fixture server needs
		mcpArgs = append(mcpArgs, "--env", kv)
	}
	cmd := exec.Command(os.Args[0], append(mcpArgs, args...)...)
	cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), env...)
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), clitest.RunBound)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to sonde mcp: %v", err)
	}
	a.cs = cs
	t.Cleanup(func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "exit status") {
			t.Errorf("closing sonde mcp: %v", err)
		}
	})
	return a
}

// call calls tool with args and returns its result (a protocol error
// fails the test).
func (a *agent) call(tool string, args map[string]any) *sdk.CallToolResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clitest.RunBound)
	defer cancel()
	res, err := a.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// ok calls tool, fails the test on an isError result, and reads its
// structuredContent into out; it returns the text summary.
func (a *agent) ok(tool string, args map[string]any, out any) string {
	a.t.Helper()
	res := a.call(tool, args)
	text := resultText(res)
	if res.IsError {
		a.t.Fatalf("%s %v: isError: %s", tool, args, text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || json.Unmarshal(b, out) != nil {
		a.t.Fatalf("%s: structuredContent %s: %v", tool, b, err)
	}
	return text
}

// refused calls tool and checks it answered isError with a text holding
// each of want.
func (a *agent) refused(tool string, args map[string]any, want ...string) {
	a.t.Helper()
	res := a.call(tool, args)
	text := resultText(res)
	if !res.IsError {
		a.t.Errorf("%s %v: not an error: %s", tool, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			a.t.Errorf("%s %v: %q lacks %q", tool, args, text, w)
		}
	}
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestAgentCaptureTools: a Go SDK client lists the capture tools (each
// with its output schema and read-only), gets from capture_lint,
// capture_stats and capture_diff what mcpserver.Lint, Stats and Diff
// compute (held to the commands by TestLintSameAsCommand and the others),
// and gets tool errors that say what to do for a missing file, a file
// that is not a capture and a name that is no session, sonde mcp serving
// on after each.
func TestAgentCaptureTools(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	a := startAgent(t, nil)
	ctx := context.Background()
	tools, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tool := range tools.Tools {
		switch tool.Name {
		case "capture_lint", "capture_stats", "capture_diff", "sessions_list":
			seen[tool.Name] = true
			if tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s: output schema %v, annotations %+v", tool.Name, tool.OutputSchema, tool.Annotations)
			}
		case "doctor":
			seen[tool.Name] = true
			if tool.Annotations == nil || tool.Annotations.ReadOnlyHint || tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint {
				t.Errorf("doctor starts servers and destroys nothing: %+v", tool.Annotations)
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("tools listed: %v", seen)
	}

	sample, err := filepath.Abs("../testdata/captures/lint/id-reused.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lint mcpserver.LintResult
	text := a.ok("capture_lint", map[string]any{"path": sample}, &lint)
	want, err := mcpserver.Lint(sample)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(asJSON(t, lint), asJSON(t, want)) || lint.Total != 1 || lint.Counts["id-reused"] != 1 {
		t.Errorf("capture_lint: %+v\nwant %+v", lint, want)
	}
	if !strings.Contains(text, "1 finding") || !strings.Contains(text, "id-reused") {
		t.Errorf("capture_lint's text: %q", text)
	}

	other, _ := filepath.Abs("../testdata/captures/concurrent-calls.jsonl")
	var st mcpserver.StatsResult
	a.ok("capture_stats", map[string]any{"path": other}, &st)
	if wantSt, _ := mcpserver.Stats(other); !reflect.DeepEqual(asJSON(t, st), asJSON(t, wantSt)) || st.Requests == 0 {
		t.Errorf("capture_stats: %+v\nwant %+v", st, wantSt)
	}
	var d mcpserver.DiffResult
	a.ok("capture_diff", map[string]any{"a": sample, "b": other}, &d)
	if wantD, _ := mcpserver.Diff(sample, other); !reflect.DeepEqual(asJSON(t, d), asJSON(t, wantD)) || !d.Differs {
		t.Errorf("capture_diff: %+v\nwant %+v", d, wantD)
	}

	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notCapture, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.refused("capture_lint", map[string]any{"path": filepath.Join(dir, "missing.jsonl")}, "missing.jsonl", "no such file", "sessions_list")
	a.refused("capture_stats", map[string]any{"path": notCapture}, "not a sonde capture", "give a capture file")
	a.refused("capture_lint", map[string]any{"path": "s42"}, `"s42" is neither a capture file nor a session id`, "sessions_list")
	a.refused("capture_diff", map[string]any{"a": sample, "b": "nope-20260101"}, "neither a capture file nor a session id")
	a.refused("capture_lint", map[string]any{}, "path")         // the schema wants it
	a.ok("capture_lint", map[string]any{"path": sample}, &lint) // still serving
}
