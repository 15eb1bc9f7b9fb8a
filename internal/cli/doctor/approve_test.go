package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestDoctorProjectApproval: in a project folder (a cloned repository),
// doctor starts none of the servers of its .mcp.json, .cursor/mcp.json and
// .vscode/mcp.json that nobody approved: it lists them as not approved
// with the command that approves them. A server Claude Code approved
// (enabledMcpjsonServers) is checked, one named with --server is checked,
// and one approved with sonde servers approve is checked from then on,
// until its entry changes.
func TestDoctorProjectApproval(t *testing.T) {
	mark := clitest.Markers(t)
	fx := clitest.NewFixture(t)
	home, project := clitest.TempHostHome(t)
	clitest.WriteTestJSON(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"cc":   clitest.MarkedEntry(fx, mark("cc")),
		"ccok": clitest.MarkedEntry(fx, mark("ccok")),
	}})
	clitest.WriteTestJSON(t, filepath.Join(project, ".claude", "settings.local.json"), map[string]any{"enabledMcpjsonServers": []string{"ccok"}})
	clitest.WriteTestJSON(t, filepath.Join(project, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{"cur": clitest.MarkedEntry(fx, mark("cur"))}})
	vs := clitest.MarkedEntry(fx, mark("vs"))
	vs["type"] = "stdio"
	clitest.WriteTestJSON(t, filepath.Join(project, ".vscode", "mcp.json"), map[string]any{"servers": map[string]any{"vs": vs}})
	// A server of the user's own files needs no approval.
	clitest.WriteTestJSON(t, filepath.Join(home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{"mine": clitest.MarkedEntry(fx, mark("mine"))}})

	r := clitest.RunSonde(t, "", "doctor")
	clitest.CheckRun(t, r, 0, "")
	for name, want := range map[string]bool{"cc": false, "cur": false, "vs": false, "ccok": true, "mine": true} {
		if clitest.Started(mark(name)) != want {
			t.Errorf("server %s started: %v, want %v\n%s", name, !want, want, r.Stdout)
		}
	}
	clitest.CheckOrder(t, r.Stdout,
		[]string{`\ncc +Claude Code +not approved +- +-\n`},
		[]string{`\nccok +Claude Code +ok `},
		[]string{`\ncur +Cursor +not approved `},
		[]string{`\nvs +VS Code +not approved `},
		[]string{`\nmine +Cursor +ok `},
		[]string{`\ncc \(Claude Code · project, .*\.mcp\.json\): not approved: .*\n  hint: approve it with sonde servers approve cc\b`},
		[]string{`\ncur \(Cursor · project, .*mcp\.json\): not approved: .*\n  hint: approve it with sonde servers approve cur\b`},
		[]string{`\nvs \(VS Code · project, .*mcp\.json\): not approved: .*\n  hint: approve it with sonde servers approve vs\b`},
	)

	// --json says it per server.
	r = clitest.RunSonde(t, "", "doctor", "--json", "--host", "vscode")
	clitest.CheckRun(t, r, 1, "sonde: doctor: no server checked: 1 not approved (sonde servers approve NAME, or name it with --server)\n")
	if !strings.Contains(r.Stdout, `"server":"vs"`) || !strings.Contains(r.Stdout, `"not_approved":true`) || !strings.Contains(r.Stdout, `sonde servers approve vs`) {
		t.Errorf("--json of a server not approved:\n%s", r.Stdout)
	}
	if clitest.Started(mark("vs")) {
		t.Fatal("doctor --json started vs")
	}

	// Named, it is checked.
	r = clitest.RunSonde(t, "", "doctor", "--server", "vs")
	clitest.CheckRun(t, r, 0, "")
	if !clitest.Started(mark("vs")) {
		t.Errorf("doctor --server vs did not start it:\n%s", r.Stdout)
	}

	// Approved in sonde, it is checked by every later run.
	r = clitest.RunSonde(t, "", "servers", "approve", "cur")
	if r.Code != 0 || !strings.Contains(r.Stderr, "sonde: server cur (Cursor · project) approved") {
		t.Fatalf("servers approve cur: exit %d\n%s", r.Code, r.Stderr)
	}
	if clitest.Started(mark("cur")) {
		t.Fatal("servers approve started cur")
	}
	r = clitest.RunSonde(t, "", "doctor")
	clitest.CheckRun(t, r, 0, "")
	if !clitest.Started(mark("cur")) || clitest.Started(mark("cc")) {
		t.Errorf("after approving cur: cur started %v, cc started %v\n%s", clitest.Started(mark("cur")), clitest.Started(mark("cc")), r.Stdout)
	}

	// A changed entry is a new one: not approved again.
	os.Remove(mark("cur"))
	changed := clitest.MarkedEntry(fx, mark("cur"))
	changed["args"] = append(changed["args"].([]string), "--echo-prefix", "changed")
	clitest.WriteTestJSON(t, filepath.Join(project, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{"cur": changed}})
	r = clitest.RunSonde(t, "", "doctor", "--host", "cursor")
	if clitest.Started(mark("cur")) {
		t.Errorf("doctor started cur after its entry changed:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "changed since it was approved") {
		t.Errorf("the changed entry is not said to have changed:\n%s", r.Stdout)
	}
}
