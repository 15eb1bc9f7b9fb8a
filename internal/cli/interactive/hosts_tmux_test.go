package interactive_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestTUIWatchHostAndInstructions: at 80x24, sonde watch's list names the
// tapped session's host as it named itself (clientInfo, and the protocol
// the handshake agreed on), not by its process; opened, the session shows
// the server's instructions on the help line, escaped, until a key, and
// the help screen has them whole. A call made from the Tools pane shows
// its result under the id the tap gave it; its form has the screen while
// it is open.
func TestTUIWatchHostAndInstructions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startTapHost(t, home, "gh", fx)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.197"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	h.await(`"id":2,"result":\{"tools"`)

	tt := startTUI(t, 80, 24, []string{"watch"})
	tt.waitFor("the host by its clientInfo", `^  LABEL\s+STATE\s+HOST\s+`, `^› gh\s+live\s+claude-code 2\.1\.197 · 2025-11-25 `,
		`^  gh-\d{8}-\d{6}-\d+ · claude-code 2\.1\.197 · 2025-11-25 · `)
	tt.keys("Enter")
	tt.waitFor("the instructions on connect", `sonde-fixture 0\.1\.0`, `^instructions: sonde-fixture is a fault-injecting MCP test server`, `\? reads all$`,
		`─ 1 Pending `, `─ 2 Frames `)
	tt.keys("?")
	tt.waitFor("the instructions in the help", `^The server's instructions \(what the host gives the model\)`,
		`^sonde-fixture is a fault-injecting MCP test server \(legacy era\)\. Tools: echo,`, `^Keys of `)
	tt.keys("?")
	tt.waitFor("the usual help line", `!^instructions:`, `─ 1 Pending `)

	// A call from the Tools pane: its result has the tap's id for it.
	tt.keys("3", "Enter")
	tt.waitFor("echo's form, zoomed at 80x24", `^╭─ 3 Tools `, `!─ 1 Pending `, `value\*`)
	tt.keys("Down", "Down")
	tt.text("from sonde")
	tt.keys("C-s")
	tt.waitFor("the form closed, unzoomed", `─ 1 Pending `, `^│from sonde`)
	tt.keys("z") // the result's header has room
	tt.waitFor("the injected call's result", `echo · id "sonde-\d+-1" · `)

	tt.keys("z")
	tt.waitFor("unzoomed", `─ 1 Pending `)
	tt.keys("Escape")
	tt.waitFor("the tool list", `^│9 tools`)
	tt.keys("1", "q")
	tt.waitFor("the list again", `^› gh\s+live`)
	h.end()
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("sonde watch exited with %d%s", code, tt.diag())
	}
	proctest.AssertGone(t, fx.PIDFile)
}
