package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestMCPToolErrors: a refused command, a bad filter, an unknown session,
// a server that crashes at start, a huge answer, a bad timeout: each an
// isError result saying what to do, and sonde mcp still serving after
// each (the last call is an echo that works).
func TestMCPToolErrors(t *testing.T) {
	fx := clitest.NewFixture(t)
	plain := fx.Argv()
	crashAtStart := []string{"sh", "-c", "echo 'boom: cannot open the database' >&2; exit 7"}
	cs := sdkClient(t, &sdk.CommandTransport{Command: mcpCommand([][]string{plain, crashAtStart})}, "")
	id := startSession(t, cs, plain)

	// a command that was not allowed: refused, nothing started
	res := callTool(t, cs, "session_start", map[string]any{"command": "rm", "args": []string{"-rf", "/tmp/x"}}, nil)
	wantToolError(t, res, "not allowed", "--allow 'rm -rf /tmp/x'", "allowed now:")
	fx.AssertStarted(1)
	// the same words but one argument off: refused
	res = callTool(t, cs, "session_start", map[string]any{"command": plain[0], "args": append(plain[1:], "--extra")}, nil)
	wantToolError(t, res, "not allowed")
	fx.AssertStarted(1)

	res = callTool(t, cs, "session_frames", map[string]any{"session": id, "filter": "verdict:"}, nil)
	wantToolError(t, res, "filter", "docs/filter.md")
	res = callTool(t, cs, "session_call", map[string]any{"session": "s99", "tool": "echo"}, nil)
	wantToolError(t, res, `unknown session "s99"`, "session_start")
	res = callTool(t, cs, "session_call", map[string]any{"session": id, "tool": "echo", "timeout": "soon"}, nil)
	wantToolError(t, res, `timeout "soon"`, "500ms")

	// a server that crashes at start: the error and the head of its stderr
	var failed struct {
		OK         bool     `json:"ok"`
		StderrHead []string `json:"stderrHead"`
		Error      struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	res = callTool(t, cs, "session_start", map[string]any{"command": crashAtStart[0], "args": crashAtStart[1:]}, &failed)
	wantToolError(t, res, "session_start failed", "boom: cannot open the database")
	if failed.OK || failed.Error.Code == "" || len(failed.StderrHead) == 0 {
		t.Errorf("crash at start: structured %+v", failed)
	}

	// a huge answer: cut with a marker, the answer bounded
	var big exchange
	res = callTool(t, cs, "session_call", map[string]any{"session": id, "tool": "big", "arguments": map[string]any{"bytes": 4 << 20}}, &big)
	if res.IsError || big.State != "resolved" || !strings.Contains(big.Text, "…[cut: ") || len(big.Result)+len(big.Text) > 300<<10 {
		t.Errorf("big: isError %v state %s, text %d bytes, result %d bytes", res.IsError, big.State, len(big.Text), len(big.Result))
	}
	var frames struct {
		Frames []struct {
			Body string `json:"body"`
			Cut  bool   `json:"cut"`
			Size int    `json:"size"`
		} `json:"frames"`
	}
	callTool(t, cs, "session_frames", map[string]any{"session": id, "limit": 200}, &frames)
	if len(frames.Frames) == 0 || !frames.Frames[0].Cut || frames.Frames[0].Size < 4<<20 || len(frames.Frames[0].Body) > 70<<10 {
		t.Errorf("the big frame is not cut: %d frames", len(frames.Frames))
	}

	// still serving
	var ex exchange
	if res := callTool(t, cs, "session_call", map[string]any{"session": id, "tool": "echo", "arguments": map[string]any{"value": "still"}}, &ex); res.IsError || !strings.Contains(ex.Text, "still") {
		t.Fatalf("echo after the errors: %s", resultText(res))
	}
}

// TestMCPConfiguredServers: a server of the user's own host config starts
// by name; a project's server (.mcp.json) that nobody approved does not,
// and the refusal says how to approve it.
func TestMCPConfiguredServers(t *testing.T) {
	home, project := clitest.TempHostHome(t)
	fx := clitest.NewFixture(t)
	mine, theirs := filepath.Join(t.TempDir(), "mine"), filepath.Join(t.TempDir(), "theirs")
	clitest.WriteTestJSON(t, filepath.Join(home, ".claude.json"), map[string]any{"mcpServers": map[string]any{"mine": clitest.MarkedEntry(fx, mine)}})
	clitest.WriteTestJSON(t, filepath.Join(project, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"theirs": clitest.MarkedEntry(fx, theirs)}})
	cs := sdkClient(t, &sdk.CommandTransport{Command: mcpCommand(nil)}, "")

	var out struct {
		Session string `json:"session"`
	}
	res := callTool(t, cs, "session_start", map[string]any{"server": "mine"}, &out)
	if res.IsError || out.Session == "" || !clitest.Started(mine) {
		t.Fatalf("session_start mine: %s", resultText(res))
	}
	res = callTool(t, cs, "session_start", map[string]any{"server": "theirs"}, nil)
	wantToolError(t, res, "sonde servers approve theirs")
	if clitest.Started(theirs) {
		t.Error("the project's unapproved server was started")
	}
	res = callTool(t, cs, "session_start", map[string]any{"server": "nobody"}, nil)
	wantToolError(t, res, `no server "nobody"`, "mine")
}

// TestMCPUsage: a non-loopback --listen without --allow-remote and an
// --allow that does not split into words are usage errors, before
// anything listens or starts.
func TestMCPUsage(t *testing.T) {
	r := clitest.RunSonde(t, "", "mcp", "--listen", "0.0.0.0:0")
	clitest.CheckRun(t, r, 2, "sonde: --listen 0.0.0.0:0 is not a loopback address: ...")
	r = clitest.RunSonde(t, "", "mcp", "--allow", "'unclosed")
	clitest.CheckRun(t, r, 2, `sonde: bad --allow entry "'unclosed": unclosed single quote...`)
}
