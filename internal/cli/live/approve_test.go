package live_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestToolsAllProjectApproval: tools --all starts no server of the
// project's .mcp.json or .vscode/mcp.json that nobody approved, and says
// so on stderr (and in --json) with the command that approves it; one
// Claude Code approved is listed, and naming the others (--server) starts
// them. A run whose every server is held is a usage error.
func TestToolsAllProjectApproval(t *testing.T) {
	mark := clitest.Markers(t)
	_, project := clitest.TempHostHome(t)
	fx := map[string]*clitest.Fixture{}
	entry := func(name string) map[string]any {
		fx[name] = clitest.NewFixture(t)
		return clitest.MarkedEntry(fx[name], mark(name))
	}
	clitest.WriteTestJSON(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"cc": entry("cc"), "ccok": entry("ccok")}})
	clitest.WriteTestJSON(t, filepath.Join(project, ".claude", "settings.json"), map[string]any{"enabledMcpjsonServers": []string{"ccok"}})
	vs := entry("vs")
	vs["type"] = "stdio"
	vscode := filepath.Join(project, ".vscode", "mcp.json")
	clitest.WriteTestJSON(t, vscode, map[string]any{"servers": map[string]any{"vs": vs}})

	r := clitest.RunSonde(t, "", "tools", "--all")
	if r.Code != cmdutil.ExitOK {
		t.Fatalf("tools --all: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, name := range []string{"cc", "vs"} {
		if clitest.Started(mark(name)) {
			t.Errorf("tools --all started %s", name)
		}
		want := "sonde: not starting server " + name + " ("
		if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "approve it with sonde servers approve "+name+", or name it with --server "+name+"\n") {
			t.Errorf("stderr does not say %s is not approved:\n%s", name, r.Stderr)
		}
	}
	if !clitest.Started(mark("ccok")) || !strings.Contains(r.Stdout, "ccok/echo") || strings.Contains(r.Stdout, "cc/echo") {
		t.Errorf("tools --all lists:\n%s", r.Stdout)
	}

	r = clitest.RunSonde(t, "", "tools", "--all", "--json")
	var out struct {
		OK          bool     `json:"ok"`
		NotApproved []string `json:"not_approved"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || !out.OK || strings.Join(out.NotApproved, ",") != "cc,vs" {
		t.Errorf("--json: %v %s", err, r.Stdout)
	}

	// Every server held: nothing to list.
	r = clitest.RunSonde(t, "", "tools", "--all", "--config", vscode)
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "sonde: --all: no server may start without being named") || clitest.Started(mark("vs")) {
		t.Errorf("tools --all over held servers only: exit %d\n%s", r.Code, r.Stderr)
	}

	// Named, they start.
	r = clitest.RunSonde(t, "", "tools", "--server", "cc", "--server", "vs")
	if r.Code != cmdutil.ExitOK || !clitest.Started(mark("cc")) || !clitest.Started(mark("vs")) {
		t.Errorf("tools --server cc --server vs: exit %d, cc %v, vs %v\n%s", r.Code, clitest.Started(mark("cc")), clitest.Started(mark("vs")), r.Stderr)
	}
	os.Remove(mark("cc"))
}
