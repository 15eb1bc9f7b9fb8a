package mcpserver_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// TestAgentSessionCapture: a session session_start opened records its
// capture: it is listed as a resource (sonde://sessions/ID), its
// subscriber is told while the session's calls grow it, resources/read
// gives its JSON lines, and capture_lint and capture_stats take the
// session's id.
func TestAgentSessionCapture(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	fx := clitest.NewFixture(t)
	argv := fx.Argv()
	a := startAgent(t, nil, "--allow", mcpserver.QuoteWords(argv))
	var start struct {
		Session string `json:"session"`
	}
	a.ok("session_start", map[string]any{"command": argv[0], "args": argv[1:]}, &start)
	uri := "sonde://sessions/" + start.Session
	ctx := context.Background()
	res, err := a.cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != uri {
		t.Fatalf("resources/list: %+v %v", res, err)
	}
	if err := a.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	a.ok("session_call", map[string]any{"session": start.Session, "tool": "echo", "arguments": map[string]any{"value": "recorded for the agent"}}, &struct{}{})
	// The recorder writes as it goes: the notification comes once the
	// call's lines reach the file.
	deadline := time.After(clitest.RunBound)
	for {
		read, err := a.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(read.Contents[0].Text, "recorded for the agent") {
			break
		}
		select {
		case <-a.grew:
		case <-deadline:
			t.Fatalf("the capture never showed the call:\n%s", read.Contents[0].Text)
		}
	}
	a.mu.Lock()
	told := len(a.updated)
	a.mu.Unlock()
	if told == 0 {
		select {
		case <-a.grew:
		case <-time.After(clitest.RunBound):
			t.Fatal("no notifications/resources/updated while the capture grew")
		}
	}
	var lint mcpserver.LintResult
	if a.ok("capture_lint", map[string]any{"path": start.Session}, &lint); lint.Total != 0 {
		t.Errorf("capture_lint of a clean session: %+v", lint)
	}
	var st mcpserver.StatsResult
	if a.ok("capture_stats", map[string]any{"path": start.Session}, &st); st.Requests == 0 {
		t.Errorf("capture_stats of the session: %+v", st)
	}
	a.ok("session_stop", map[string]any{"session": start.Session}, &struct{}{})
	if a.ok("capture_lint", map[string]any{"path": start.Session}, &lint); lint.Total != 0 || !strings.HasSuffix(lint.Capture, filepath.Base(start.Session)+".jsonl") {
		t.Errorf("capture_lint after session_stop: %+v", lint)
	}
}
