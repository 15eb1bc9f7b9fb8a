package interactive_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestTUIFeatures drives the Features pane and a task against
// server-everything in a real terminal: a resource read, a prompt got
// through its form with the server's completions, the log level set and
// log messages shown, and a task-only tool called from the Tools pane,
// shown in Pending until it ends.
func TestTUIFeatures(t *testing.T) {
	bin := peertest.Everything(t)
	tt := startTUI(t, 130, 40, []string{"--", bin})
	tt.waitFor("the handshake", `mcp-servers/everything 2\.0\.0`, `─ 3 Tools 1\d `)

	tt.keys("6", "z") // zoomed: the whole width
	tt.waitFor("the Features pane", `─ 6 Resources 9 · Prompts 4 · Log \d+ `, `› demo://resource/static/document/architecture\.md`, `enter read/get`)
	tt.keys("Enter")
	tt.waitFor("the resource read", `── read demo://resource/static/document/architecture\.md`, `# Everything Server`)

	tt.keys("P", "j", "j", "Enter")
	tt.waitFor("the prompt form", `values for completable-prompt`, `department\*`, `ctrl\+o complete`)
	tt.text("S")
	tt.keys("C-o")
	tt.waitFor("completions of department", `department: Sales · Support \(ctrl\+o: next\)`)
	tt.keys("Tab", "C-o")
	tt.waitFor("completions of name in the context of Sales", `name: David · Eve · Frank`)
	tt.keys("C-s")
	tt.waitFor("the prompt's messages", `── prompt completable-prompt`, `── user`, `Please promote David to the head of the Sales team\.`)

	tt.keys("L")
	tt.waitFor("the log view", `level ≥ debug · logger all · server level not set`)
	tt.keys("s")
	tt.waitFor("the level set", `server log level set to debug`, `server level debug`)

	// Simulated logging, from the Tools pane: one message at once.
	tt.keys("3", "/")
	tt.text("toggle-sim")
	tt.keys("Enter", "Enter") // keeps the filter (back in the list), then the form
	tt.waitFor("the empty form", `call toggle-simulated-logging`)
	tt.keys("C-s")
	tt.waitFor("the tool's result", `Started simulated`)
	tt.keys("Escape") // alone: ESC followed at once by 6 would read as alt+6
	tt.waitFor("the tool list", `─ 3 Tools 1\d · filter: toggle-sim `, `!result 1/1`)
	tt.keys("6")
	tt.waitFor("a log message", `\d\d:\d\d:\d\d\.\d{3} \w+ +\w+-level message|Alert level-message`)

	// A task-only tool: its task has a row in Pending until it ends.
	tt.keys("3")
	tt.waitFor("the Tools pane", `─ 3 Tools 1\d · filter: toggle-sim `)
	tt.keys("Escape") // clears the filter
	tt.waitFor("the filter cleared", `─ 3 Tools 1\d ─`)
	tt.keys("/")
	tt.text("simulate-re")
	tt.keys("Enter", "Enter") // keeps the filter (back in the list), then the form
	tt.waitFor("the research form", `call simulate-research-query`, `› topic\*`)
	tt.text("tides")
	tt.keys("C-s")
	tt.waitFor("the form closed", `─ 3 Tools 1\d · filter: simulate-re · 1 calling`)
	tt.keys("1") // Pending, zoomed
	tt.waitFor("the task in Pending", `^│>?\s*"[0-9a-f]+\S*\s+task simulate-research-query\s+progress\s.*working: `)
	tt.waitFor("the task's end", `^│>?\s*"[0-9a-f]+\S*\s+task simulate-research-query\s+resolved\s`)
	tt.keys("3")
	tt.waitFor("the task's result", `Research Report: tides`)
	tt.quit()
}
