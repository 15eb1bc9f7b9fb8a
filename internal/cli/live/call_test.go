package live_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestCallOutput checks what call prints, as text and with --json, for a
// result, a result with isError, and each kind of failure.
func TestCallOutput(t *testing.T) {
	cases := []struct {
		name    string
		sub     []string // call's arguments and flags
		faults  []string // fixture arguments
		code    int
		stdout  string // exact text, or JSON compared as a value when json is set
		json    bool
		errLine string
	}{
		{
			name: "text", sub: []string{"call", "echo", "--args", `{"value":"hello there"}`},
			code: cmdutil.ExitOK, stdout: "hello there\n",
		},
		{
			name: "text of a sum", sub: []string{"call", "add", "--args", `{"a":2,"b":3}`},
			code: cmdutil.ExitOK, stdout: "5\n",
		},
		{
			name: "text of a big result", sub: []string{"call", "big", "--args", `{"bytes":40}`},
			code: cmdutil.ExitOK, stdout: "abcdefghijklmnopqrstuvwxyz0123456789abcd\n",
		},
		{
			name: "json", sub: []string{"call", "echo", "--json", "--args", `{"value":"hi"}`},
			code: cmdutil.ExitOK, json: true,
			stdout: `{"ok":true,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"value":"hi"}}}`,
		},
		{
			name: "json isError", sub: []string{"call", "tool-error", "--json", "--args", `{"message":"no luck"}`},
			code: cmdutil.ExitToolError, json: true,
			stdout:  `{"ok":false,"result":{"content":[{"type":"text","text":"no luck"}],"isError":true}}`,
			errLine: "sonde: tool tool-error returned a result with isError\n",
		},
		{
			name: "json MCP_ERROR", sub: []string{"call", "fail", "--json", "--args", `{"message":"broken"}`},
			code: cmdutil.ExitRemote, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_ERROR","message":"server error -32001: broken","rpc_code":-32001,"data":{"tool":"fail"}}}`,
			errLine: "sonde: MCP_ERROR: server error -32001: broken\n",
		},
		// json MCP_TIMEOUT (its snapshot varies): connect's TestTimeoutSnapshot.
		{
			name: "json MCP_HANDSHAKE", sub: []string{"call", "echo", "--json", "--args", `{"value":"hi"}`},
			faults: []string{"--protocol-version", "1999-01-01"},
			code:   cmdutil.ExitHandshake, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_HANDSHAKE","message":"initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01, which sonde does not support (supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"}}`,
			errLine: "sonde: MCP_HANDSHAKE: initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01...",
		},
		{
			// A usage error is not a failure of the server: nothing on stdout.
			name: "json usage error", sub: []string{"call", "echo", "--json", "--args", "nope"},
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: --args is not valid JSON: invalid character 'o' in literal null (expecting 'u') (line 1, column 2)\n  nope\n   ^\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.NewFixture(t).RunChecked("", tc.sub, tc.faults, tc.code, tc.errLine)
			switch {
			case tc.json:
				if strings.Count(r.Stdout, "\n") != 1 || !clitest.SameJSON(t, r.Stdout, tc.stdout) {
					t.Errorf("stdout = %s, want one line %s", r.Stdout, tc.stdout)
				}
			case r.Stdout != tc.stdout:
				t.Errorf("stdout = %q, want %q", r.Stdout, tc.stdout)
			}
		})
	}
}

// TestCallJSONSpawnFailure: with --json a server that cannot start is
// reported on stdout too.
func TestCallJSONSpawnFailure(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	r := clitest.RunSonde(t, "", "call", "echo", "--json", "--", missing)
	clitest.CheckRun(t, r, cmdutil.ExitSpawn, `sonde: MCP_SPAWN: cannot start "`+missing+`": executable not found (check the path or PATH)`+"\n")
	want := `{"ok":false,"error":{"code":"MCP_SPAWN","message":"cannot start \"` + missing + `\": executable not found (check the path or PATH)"}}`
	if !clitest.SameJSON(t, r.Stdout, want) {
		t.Errorf("stdout = %s, want %s", r.Stdout, want)
	}
}

// TestCallArgsFrom reads --args from a file and from stdin.
func TestCallArgsFrom(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "args.json")
	clitest.WriteTestFile(t, file, "  {\"value\": \"from a file\"}\n")
	missing := filepath.Join(dir, "missing.json")
	cases := []struct {
		name    string
		args    string
		stdin   string
		code    int
		stdout  string
		errLine string
		started int
	}{
		{name: "file", args: "@" + file, code: cmdutil.ExitOK, stdout: "from a file\n", started: 1},
		{name: "stdin", args: "@-", stdin: `{"value":"from stdin"}`, code: cmdutil.ExitOK, stdout: "from stdin\n", started: 1},
		{name: "stdin not an object", args: "@-", stdin: `"from stdin"`, code: cmdutil.ExitUsage,
			errLine: `sonde: --args is a JSON string, not an object: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n"},
		{name: "empty stdin", args: "@-", stdin: "", code: cmdutil.ExitUsage,
			errLine: `sonde: --args is empty: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n"},
		// A syntax error in a file names the line and column, with a caret.
		{name: "stdin bad JSON", args: "@-", stdin: "{\n  \"a\": 1\n  \"b\": 2\n}", code: cmdutil.ExitUsage,
			errLine: "sonde: --args is not valid JSON: invalid character '\"' after object key:value pair (line 3, column 3)\n    \"b\": 2\n    ^\n"},
		{name: "missing file", args: "@" + missing, code: cmdutil.ExitUsage,
			errLine: "sonde: --args @" + missing + ": open " + missing + ": no such file or directory\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			r := f.RunChecked(tc.stdin, []string{"call", "echo", "--args", tc.args}, nil, tc.code, tc.errLine)
			if r.Stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.Stdout, tc.stdout)
			}
			f.AssertStarted(tc.started)
		})
	}
}
