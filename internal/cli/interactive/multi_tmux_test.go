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
// beta running and the others not started; enter opens alpha in the
// inspector (started then: its handshake), q comes back to the list with
// alpha running, q quits. gamma never ran (pid probe); every process is
// gone after.
func TestTUIServers(t *testing.T) {
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
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg := filepath.Join(home, "hosts", "claude_desktop_config.json")
	clitest.WriteTestFile(t, cfg, string(b))

	tt := startTUI(t, 100, 30, []string{"--config", cfg, "--all", "--prewarm", "beta"})
	tt.waitFor("the server list",
		`sonde · 3 servers · 1 running · each starts when you open it`,
		`^› alpha\s+not started\s+0 · Claude Desktop · user`,
		`^  beta\s+ready \(pid \d+\)\s+0 · Claude Desktop`,
		`^  gamma\s+not started`,
		`enter inspect`)
	fx["alpha"].AssertStarted(0)

	tt.keys("Enter")
	tt.waitFor("the inspector on alpha", append([]string{`│ alpha · stdio pid \d+ │`}, handshake...)...)
	tt.keys("q")
	tt.waitFor("the list again", `sonde · 3 servers · 2 running`, `^› alpha\s+ready \(pid \d+\)`, `^  gamma\s+not started`)
	tt.quit()
	fx["alpha"].AssertStarted(1)
	fx["beta"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)
	for _, f := range fx {
		proctest.AssertGone(t, f.PIDFile)
	}
}
