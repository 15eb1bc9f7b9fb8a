package connect_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/paths"
)

// TestUnnamed: the start rule over real files. A server of the user's
// files is never held; of the project's, one Claude Code enabled starts
// (By "Claude Code"), one it disabled or never approved is held, one
// approved in sonde starts (By "sonde") until its entry changes; a name
// found in two project files is approved with --config.
func TestUnnamed(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	clitest.WriteTestJSON(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"on": map[string]any{"command": "true"}, "off": map[string]any{"command": "true"},
		"new": map[string]any{"command": "true"}, "twice": map[string]any{"command": "true"},
	}})
	clitest.WriteTestJSON(t, filepath.Join(project, ".claude", "settings.local.json"), map[string]any{
		"enabledMcpjsonServers": []string{"on", "off"}, "disabledMcpjsonServers": []string{"off"},
	})
	clitest.WriteTestJSON(t, filepath.Join(project, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"twice": map[string]any{"command": "true"}, "cur": map[string]any{"command": "true", "args": []string{"a"}},
	}})
	clitest.WriteTestJSON(t, filepath.Join(home, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{"mine": map[string]any{"command": "true"}}})
	p, err := paths.For("linux", home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p.State = t.TempDir()
	h := connect.Hosts{Paths: p, Home: home, Project: project}

	gates := func() map[string]connect.Gate {
		t.Helper()
		found := h.Load("")
		gs, err := h.Unnamed(found.Servers)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]connect.Gate{}
		for i, s := range found.Servers {
			out[s.Host+"/"+s.Name] = gs[i]
		}
		return out
	}
	g := gates()
	for key, want := range map[string]string{
		"Claude Code/on": "by Claude Code", "Claude Code/off": "held", "Claude Code/new": "held",
		"Claude Code/twice": "held", "Cursor/twice": "held", "Cursor/cur": "held", "Cursor/mine": "by ",
	} {
		gate, ok := g[key]
		got := "by " + gate.By
		if gate.Held {
			got = "held"
		}
		if !ok || got != want {
			t.Errorf("%s: %+v (found %v), want %s", key, gate, ok, want)
		}
	}
	if w := g["Claude Code/off"].Why; !strings.Contains(w, "disabled in Claude Code") {
		t.Errorf("off: why %q", w)
	}
	if a := g["Cursor/twice"].Approve; a != "sonde servers approve twice --config "+filepath.Join(project, ".cursor", "mcp.json") {
		t.Errorf("twice: approve %q", a)
	}
	if a := g["Cursor/cur"].Approve; a != "sonde servers approve cur" {
		t.Errorf("cur: approve %q", a)
	}

	found := h.Load("")
	cur, err := hostconfig.Find(found.Servers, "cur")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Approve(cur); err != nil {
		t.Fatal(err)
	}
	if g := gates()["Cursor/cur"]; g.Held || g.By != "sonde" {
		t.Errorf("cur approved: %+v", g)
	}
	clitest.WriteTestJSON(t, filepath.Join(project, ".cursor", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"twice": map[string]any{"command": "true"}, "cur": map[string]any{"command": "true", "args": []string{"b"}},
	}})
	if g := gates()["Cursor/cur"]; !g.Held || !strings.Contains(g.Why, "changed since it was approved") {
		t.Errorf("cur changed: %+v", g)
	}
}
