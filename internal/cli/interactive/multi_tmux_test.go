package interactive_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestTUIServers runs `sonde --all --prewarm beta` in a terminal (tmux)
// over a host file listing the fixture three times: the server list shows
// beta running and the others not started; enter opens the aggregated
// inspector with alpha started then (its handshake), q comes back to the list with
// alpha running, q quits. gamma never ran (pid probe); every process is
// gone after.
func TestTUIServers(t *testing.T) {
	cfg, fx := serversConfig(t)
	tt := startTUI(t, 100, 30, []string{"--config", cfg, "--all", "--prewarm", "beta"})
	tt.waitFor("the server list",
		`sonde · 4 servers · 1 running · each starts when you open it`,
		`^› alpha\s+not started\s+0 · Claude Desktop · user`,
		`^  broken\s+not started`,
		`^  beta\s+ready \(pid \d+\)\s+0 · Claude Desktop`,
		`^  gamma\s+not started`,
		`enter inspect`)
	fx["alpha"].AssertStarted(0)

	tt.keys("Enter")
	tt.waitFor("the aggregated inspector, alpha started", `│ alpha pid \d+ │ beta pid \d+ │ broken not started │ gamma not started │`,
		`─ 3 Tools 18 `, `alpha\s+<- 2\s+response\s+resolved`)
	tt.keys("q")
	tt.waitFor("the list again", `sonde · 4 servers · 2 running`, `^› alpha\s+ready \(pid \d+\)`, `^  gamma\s+not started`)

	// t: the running servers' tools as server/tool, the names both have
	// flagged; the others do not start for it.
	tt.keys("t")
	tt.waitFor("the tools", `tools of the running servers · 18 tools, 18 in conflict`,
		`^› alpha/echo\s+conflict: also in beta\s+Returns value`, `^  beta/add\s+conflict: also in alpha`,
		`^not running: broken, gamma`)
	tt.keys("t")
	tt.waitFor("the list after the tools", `^› alpha\s+ready`)
	fx["gamma"].AssertStarted(0)

	// A server that cannot start comes back to the list, still selected,
	// with why: it backs off (1s), then shows as failed.
	tt.keys("Down", "Down", "Enter")
	tt.waitFor("the failed start", `^› broken\s+(backing off|failed)\s+1 · `, `^broken: MCP_SPAWN: cannot start `, `last failure: MCP_SPAWN`)
	tt.waitFor("the backoff over", `^› broken\s+failed\s+1 · `)
	tt.keys("R")
	tt.waitFor("its failure report", `sonde · failure report`, `^server:\s+broken`, `^phase:\s+start`, `^code:\s+MCP_SPAWN`, `^request:\s+initialize`)
	tt.keys("R")
	tt.waitFor("the list after the report", `^› broken\s+failed`)
	tt.quit()
	fx["alpha"].AssertStarted(1)
	fx["beta"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)
	for _, f := range fx {
		proctest.AssertGone(t, f.PIDFile)
	}
}

// serversConfig writes a host config with the fixture as alpha, beta and
// gamma, and a server that cannot start (broken), in a home of its own.
func serversConfig(t *testing.T) (string, map[string]*clitest.Fixture) {
	t.Helper()
	home := t.TempDir()
	clitest.HostHome(t, home, t.TempDir())
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	fx := map[string]*clitest.Fixture{}
	servers := map[string]any{}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		f := clitest.NewFixture(t)
		argv := f.Argv()
		servers[name] = map[string]any{"command": argv[0], "args": argv[1:], "env": env}
		fx[name] = f
	}
	servers["broken"] = map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg := filepath.Join(home, "hosts", "claude_desktop_config.json")
	clitest.WriteTestFile(t, cfg, string(b))
	return cfg, fx
}

// TestTUIPickerMarksSeveral: in the picker, space marks servers and enter
// opens the server list over the marked ones only; none of them runs
// until opened, and the server not marked never does.
func TestTUIPickerMarksSeveral(t *testing.T) {
	cfg, fx := serversConfig(t)
	tt := startTUI(t, 100, 30, []string{"--config", cfg})
	tt.waitFor("the picker", `sonde · pick a server · 4 found`, `^› alpha\s+Claude Desktop`, `enter start`, `space mark`)
	tt.keys("Space", "Down", "Space")
	tt.waitFor("two marked", `^ ●alpha`, `^›●beta`, `enter start the 2 marked`)
	tt.keys("Enter")
	tt.waitFor("the server list over them", `sonde · 2 servers · 0 running · each starts when you open it`,
		`^› alpha\s+not started`, `^  beta\s+not started`)
	fx["alpha"].AssertStarted(0)
	tt.keys("Enter")
	tt.waitFor("the aggregated inspector, alpha started", `│ alpha pid \d+ │ beta not started │`, `─ 3 Tools 9 `, `alpha\s+<- 2\s+response\s+resolved`)
	tt.keys("q")
	tt.waitFor("the list again", `sonde · 2 servers · 1 running`)
	tt.quit()
	fx["alpha"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)
}
