package mcpserver_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// TestAgentDoctor: the doctor tool runs sonde doctor's checklist over the
// configured servers and gives what sonde doctor --json gives (each
// server's result, failing step and steps in order); naming a project
// server nobody approved does not approve it (it is not started); an
// unknown name is a tool error.
func TestAgentDoctor(t *testing.T) {
	home, project := clitest.TempHostHome(t)
	t.Setenv("SONDE_HOME", t.TempDir())
	fx := clitest.NewFixture(t)
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	clitest.WriteTestJSON(t, filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"), map[string]any{"mcpServers": map[string]any{
		"healthy": map[string]any{"command": fx.Argv()[0], "args": fx.Argv()[1:], "env": env},
		"missing": map[string]any{"command": "sonde-no-such-command-xyz"},
	}})
	marker := filepath.Join(t.TempDir(), "started")
	clitest.WriteTestJSON(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"proj": clitest.MarkedEntry(fx, marker),
	}})
	a := startAgent(t, nil)

	var all mcpserver.DoctorResult
	text := a.ok("doctor", nil, &all)
	r := clitest.RunSonde(t, "", "doctor", "--json")
	want := map[string]mcpserver.DoctorServer{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var d mcpserver.DoctorServer
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("doctor --json line %q: %v", line, err)
		}
		want[d.Server] = d
	}
	if len(all.Servers) != 3 || len(want) != 3 {
		t.Fatalf("doctor: %+v\nsonde doctor --json:\n%s", all, r.Stdout)
	}
	for _, d := range all.Servers {
		w := want[d.Server]
		if d.OK != w.OK || d.Failed != w.Failed || d.NotApproved != w.NotApproved || stepNames(d) != stepNames(w) {
			t.Errorf("%s: %+v\nsonde doctor --json: %+v", d.Server, d, w)
		}
	}
	if got := byName(all)["healthy"]; !got.OK || !strings.Contains(stepNames(got), "initialize") {
		t.Errorf("healthy: %+v", got)
	}
	if got := byName(all)["missing"]; got.OK || got.Failed != "command" {
		t.Errorf("missing: %+v", got)
	}
	if !strings.Contains(text, "1 of 3 servers ok") || !strings.Contains(text, "missing: FAIL at command") || !strings.Contains(text, "proj: not approved") {
		t.Errorf("doctor's text: %q", text)
	}

	var one mcpserver.DoctorResult
	a.ok("doctor", map[string]any{"server": "proj"}, &one)
	if len(one.Servers) != 1 || !one.Servers[0].NotApproved || !strings.Contains(one.Servers[0].Approve, "sonde servers approve proj") {
		t.Errorf("doctor proj: %+v", one)
	}
	if clitest.Started(marker) {
		t.Error("the doctor tool started a project server nobody approved")
	}
	a.refused("doctor", map[string]any{"server": "nope"}, `"nope"`, "sonde config list")
}

func stepNames(d mcpserver.DoctorServer) string {
	var names []string
	for _, s := range d.Steps {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

func byName(r mcpserver.DoctorResult) map[string]mcpserver.DoctorServer {
	out := map[string]mcpserver.DoctorServer{}
	for _, d := range r.Servers {
		out[d.Server] = d
	}
	return out
}
