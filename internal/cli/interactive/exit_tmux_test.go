package interactive_test

import "testing"

// TestTUIServerExitsAtOnce: `sonde -- false` opens the UI on a server that
// exits before the handshake; the Tools pane says why there are no tools
// and that ctrl+r restarts it (rather than waiting for tools/list forever),
// and ctrl+r tries again.
func TestTUIServerExitsAtOnce(t *testing.T) {
	tt := startTUI(t, 100, 30, []string{"--", "false"})
	why := []string{`No tools: the handshake failed\.`, `MCP_PROCESS_EXIT`, `ctrl\+r restarts the server`, `!waiting for tools/list`}
	tt.waitFor("the reason in Tools", why...)
	tt.keys("C-r")
	tt.waitFor("a second start, failing the same way", append(why, `(?s)pid \d+ started.*pid \d+ started`)...)
	tt.quit()
}
