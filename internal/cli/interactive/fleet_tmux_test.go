package interactive_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
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
	tt.waitFor("the fleet inspector, alpha started", `│ alpha pid \d+ │ beta pid \d+ │ broken not started │ gamma not started │`,
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
	servers, fx := fixtureServers(t, "alpha", "beta", "gamma")
	servers["broken"] = map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}
	return writeHostConfig(t, servers), fx
}

// fixtureServers are host config entries of the fixture under names, each
// with its own pid file.
func fixtureServers(t *testing.T, names ...string) (map[string]any, map[string]*clitest.Fixture) {
	t.Helper()
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	fx := map[string]*clitest.Fixture{}
	servers := map[string]any{}
	for _, name := range names {
		f := clitest.NewFixture(t)
		argv := f.Argv()
		servers[name] = map[string]any{"command": argv[0], "args": argv[1:], "env": env}
		fx[name] = f
	}
	return servers, fx
}

// writeHostConfig writes servers as Claude Desktop's config in a home of
// its own, and returns its path.
func writeHostConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	home := t.TempDir()
	clitest.HostHome(t, home, t.TempDir())
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg := filepath.Join(home, "hosts", "claude_desktop_config.json")
	clitest.WriteTestFile(t, cfg, string(b))
	return cfg
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
	tt.waitFor("the fleet inspector, alpha started", `│ alpha pid \d+ │ beta not started │`, `─ 3 Tools 9 `, `alpha\s+<- 2\s+response\s+resolved`)
	tt.keys("q")
	tt.waitFor("the list again", `sonde · 2 servers · 1 running`)
	tt.quit()
	fx["alpha"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)
}

// TestTUIAggregated is the fleet inspector over the fixture as alpha
// and beta (the same tool names: conflicts), server-everything (npm) and
// a server that cannot start: enter in the list starts alpha only; picking
// beta's row in Tools starts beta and no other (pid probes), its tools come
// as beta/… with the conflicts flagged; picking broken's row fails, which
// the status bar says, and R (with S on it) shows its failure report; S
// shows one server's rows at a time (the titles say which), and picking
// everything's row there starts it. Leaving the inspector keeps the servers
// running, and opening it again shows what it showed; leaving the list
// stops them all.
func TestTUIAggregated(t *testing.T) {
	bin := peertest.Everything(t)
	servers, fx := fixtureServers(t, "alpha", "beta")
	// server-everything behind a shell that writes its pid (exec keeps it).
	evPIDs := filepath.Join(t.TempDir(), "everything.pids")
	servers["everything"] = map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo $$ >> "$0"; exec "$1"`, evPIDs, bin}}
	servers["broken"] = map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}
	cfg := writeHostConfig(t, servers)
	everythingStarted := func() int {
		if _, err := os.Stat(evPIDs); err != nil {
			return 0
		}
		return len(proctest.ReadPIDs(t, evPIDs))
	}

	tt := startTUI(t, 130, 40, []string{"--config", cfg, "--all"})
	tt.waitFor("the server list", `sonde · 4 servers · 0 running`, `^› alpha\s+not started`, `^  everything\s+not started`)
	tt.keys("Enter")
	tt.waitFor("the fleet inspector, alpha started", `│ alpha pid \d+ │ beta not started │ broken not started │ everything not started │`,
		`─ 3 Tools 9 `, `alpha\s+<- 2\s+response\s+resolved`)
	fx["beta"].AssertStarted(0)

	// The rows of the servers not started come last: beta's, broken's,
	// everything's.
	tt.keys("3", "G", "Up", "Up")
	tt.waitFor("beta's row", `› beta/…`, `not started: enter starts it`)
	tt.keys("Enter")
	tt.waitFor("beta started, its tools listed with the conflicts", `│ alpha pid \d+ │ beta pid \d+ │ broken not started │ everything not started │`,
		`─ 3 Tools 18 `, `beta\s+<- 2\s+response\s+resolved`)
	fx["beta"].AssertStarted(1)
	if n := everythingStarted(); n != 0 {
		t.Fatalf("server-everything started %d times; nobody picked it", n)
	}
	tt.keys("Home")
	tt.waitFor("a conflict", `› alpha/echo\s+⚠`, `conflict: also in beta`)

	// broken's row: its start fails, said in the status bar and its row.
	tt.keys("G", "Up", "Enter")
	tt.waitFor("broken's failed start", `│ broken failed │`, `broken: MCP_SPAWN: cannot start`, `did not start: MCP_SPAWN`)

	// S: one server's rows, then the next.
	tt.keys("S")
	tt.waitFor("alpha's rows only", `─ 1 Pending 0 · server alpha `, `filter: server alpha`, `─ 3 Tools 9 `, `─ 4 stderr \S+ · server alpha`, `S servers: alpha`)
	tt.keys("S", "S")
	tt.waitFor("broken's rows only", `─ 1 Pending 0 · server broken `, `S servers: broken`)
	tt.keys("R")
	tt.waitFor("broken's failure report", `failure report · broken`, `code:\s+MCP_SPAWN`, `phase:\s+start`)
	tt.keys("Escape") // alone: esc then S at once reads as alt+S
	tt.waitFor("the report closed", `S servers: broken`)
	tt.keys("S")
	tt.waitFor("everything's rows only", `─ 1 Pending 0 · server everything `, `─ 3 Tools 0 `, `› everything/…`)
	tt.keys("Enter")
	tt.waitFor("everything started", `│ everything pid \d+ │`, `─ 3 Tools [1-9]\d* `, `everything/echo\s+⚠`)
	if n := everythingStarted(); n != 1 {
		t.Fatalf("server-everything started %d times, want 1", n)
	}
	tt.keys("S")
	tt.waitFor("all servers again", `─ 1 Pending 0 ─`, `S servers: all`)

	tt.keys("q")
	tt.waitFor("the list again", `sonde · 4 servers · 3 running`)
	// Opened again, the inspector still shows what it showed (alpha's
	// start, followed from the first run), with the three servers taken
	// again and none started anew.
	tt.keys("Enter")
	tt.waitFor("the inspector again", `│ alpha pid \d+ │ beta pid \d+ │ broken failed │ everything pid \d+ │`,
		`alpha\s+── pid \d+ started`, `─ 3 Tools [1-9]\d* `,
		// each server's tools listed again (so q finds nothing in flight)
		`alpha\s+<- 3\s+response`, `beta\s+<- 3\s+response`, `everyth\S*\s+<- 3\s+response`, `─ 1 Pending 0 ─`)
	tt.keys("q")
	tt.waitFor("the list once more", `sonde · 4 servers · 3 running`)
	tt.quit()
	for _, f := range fx {
		f.AssertStarted(1)
		proctest.AssertGone(t, f.PIDFile)
	}
	proctest.AssertGone(t, evPIDs)
}
