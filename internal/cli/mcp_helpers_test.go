package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// mcpBound bounds one MCP exchange of a test (a hang guard, not a speed
// claim).
const mcpBound = 60 * time.Second

// mcpCommand is `sonde mcp` with an --allow for each argv (and extra
// flags), run as the re-executed test binary.
func mcpCommand(allow [][]string, extra ...string) *exec.Cmd {
	args := []string{"mcp"}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	for _, a := range allow {
		args = append(args, "--allow", mcpserver.QuoteWords(a))
	}
	cmd := exec.Command(os.Args[0], append(args, extra...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	return cmd
}

// sdkClient connects the Go SDK's client to t (at protocol version pv;
// "": the SDK's newest) and closes it at the test's end.
func sdkClient(t *testing.T, tr sdk.Transport, pv string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpBound)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "sonde-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool of sonde mcp and decodes its structuredContent
// into out (nil: not decoded); it returns the result.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpBound)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structuredContent %s: %v", name, b, err)
		}
	}
	return res
}

// resultText is the text of a result's content blocks.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// wantToolError checks res is an isError result whose text holds each of
// subs.
func wantToolError(t *testing.T, res *sdk.CallToolResult, subs ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an isError result, got %s", resultText(res))
	}
	for _, s := range subs {
		if !strings.Contains(resultText(res), s) {
			t.Errorf("error text %q lacks %q", resultText(res), s)
		}
	}
}

// startSession starts a session on argv and returns its id.
func startSession(t *testing.T, cs *sdk.ClientSession, argv []string) string {
	t.Helper()
	var out struct {
		Session string `json:"session"`
		OK      bool   `json:"ok"`
	}
	res := callTool(t, cs, "session_start", map[string]any{"command": argv[0], "args": argv[1:]}, &out)
	if res.IsError || !out.OK || out.Session == "" {
		t.Fatalf("session_start: %s", resultText(res))
	}
	return out.Session
}
