package mcpserver_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// TestAgentReplayAgainst: replay_against re-sends a capture recorded by
// sonde tools --record to the same server (everything equal) and to the
// server with hostile text in its tool list (different, the escapes shown
// escaped); a command that is not allowed and a capture that is missing
// are tool errors saying what to do.
func TestAgentReplayAgainst(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	fx := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "tools.jsonl")
	if r := clitest.RunSonde(t, "", fx.Cmd([]string{"tools", "--record", path})...); r.Code != 0 {
		t.Fatalf("sonde tools --record: %d %s", r.Code, r.Stderr)
	}
	plain, hostile := fx.Argv(), fx.Argv("--fault", "hostile-text")
	a := startAgent(t, nil, "--allow", mcpserver.QuoteWords(plain), "--allow", mcpserver.QuoteWords(hostile))

	var same mcpserver.ReplayResult
	text := a.ok("replay_against", map[string]any{"capture": path, "command": plain[0], "args": plain[1:]}, &same)
	if !same.Equal || same.Counts.Equal == 0 || same.Counts.Different != 0 || !strings.Contains(text, "answered as recorded") {
		t.Errorf("replay against the same server: %+v\n%s", same, text)
	}
	var changed mcpserver.ReplayResult
	text = a.ok("replay_against", map[string]any{"capture": path, "command": hostile[0], "args": hostile[1:]}, &changed)
	if changed.Equal || changed.Counts.Different == 0 || len(changed.Requests) == 0 || changed.Requests[0].Status != "different" ||
		len(changed.Requests[0].Diffs) == 0 || !strings.Contains(text, "answered differently") {
		t.Fatalf("replay against hostile text: %+v\n%s", changed, text)
	}
	// The same re-drive as sonde replay --against: the same statuses.
	r := clitest.RunSonde(t, "", fx.Cmd([]string{"replay", "--json", "--no-pacing", "--against", path}, "--fault", "hostile-text")...)
	var cmd struct {
		Equal    bool
		Requests []struct{ Method, Status string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &cmd); err != nil || cmd.Equal || len(cmd.Requests) != len(changed.Requests) {
		t.Fatalf("sonde replay --against: %v %+v\n%s", err, cmd, r.Stdout)
	}
	statuses := map[string]string{}
	for _, q := range cmd.Requests {
		statuses[q.Method] += q.Status + " "
	}
	for _, q := range changed.Requests {
		if !strings.Contains(statuses[q.Method], q.Status) {
			t.Errorf("%s: %s here, %q by sonde replay --against", q.Method, q.Status, statuses[q.Method])
		}
	}
	raw, _ := json.Marshal(changed)
	var decoded any
	json.Unmarshal(raw, &decoded)
	if s := fmtAll(decoded); strings.ContainsAny(s, "\x1b\x07\u009b\x7f") || !strings.Contains(s, `\u001b]0;pwned`) || !strings.Contains(s, `\x7f`) {
		t.Errorf("replay_against's answer passes the server's escapes on (or hides them):\n%s", s)
	}
	a.refused("replay_against", map[string]any{"capture": path, "command": plain[0], "args": []string{"--other"}}, "--allow")
	a.refused("replay_against", map[string]any{"capture": filepath.Join(t.TempDir(), "none.jsonl"), "command": plain[0], "args": plain[1:]}, "no such file")
}

// fmtAll is every string of a decoded JSON value, one a line.
func fmtAll(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
