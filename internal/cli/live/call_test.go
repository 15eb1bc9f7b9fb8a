package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			code: exitOK, stdout: "hello there\n",
		},
		{
			name: "text of a sum", sub: []string{"call", "add", "--args", `{"a":2,"b":3}`},
			code: exitOK, stdout: "5\n",
		},
		{
			name: "text of a big result", sub: []string{"call", "big", "--args", `{"bytes":40}`},
			code: exitOK, stdout: "abcdefghijklmnopqrstuvwxyz0123456789abcd\n",
		},
		{
			name: "json", sub: []string{"call", "echo", "--json", "--args", `{"value":"hi"}`},
			code: exitOK, json: true,
			stdout: `{"ok":true,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"value":"hi"}}}`,
		},
		{
			name: "json isError", sub: []string{"call", "tool-error", "--json", "--args", `{"message":"no luck"}`},
			code: exitToolError, json: true,
			stdout:  `{"ok":false,"result":{"content":[{"type":"text","text":"no luck"}],"isError":true}}`,
			errLine: "sonde: tool tool-error returned a result with isError\n",
		},
		{
			name: "json MCP_ERROR", sub: []string{"call", "fail", "--json", "--args", `{"message":"broken"}`},
			code: exitRemote, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_ERROR","message":"server error -32001: broken","rpc_code":-32001,"data":{"tool":"fail"}}}`,
			errLine: "sonde: MCP_ERROR: server error -32001: broken\n",
		},
		{
			name: "json MCP_TIMEOUT", sub: []string{"call", "echo", "--json", "--timeout", slowTimeout, "--args", `{"value":"hi"}`},
			faults: []string{"--fault", "never-respond"},
			code:   exitTimeout, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_TIMEOUT","message":"tools/call id 2: no response within ` + slowTimeout + `"}}`,
			errLine: "sonde: MCP_TIMEOUT: tools/call id 2: no response within " + slowTimeout + "\n",
		},
		{
			name: "json MCP_HANDSHAKE", sub: []string{"call", "echo", "--json", "--args", `{"value":"hi"}`},
			faults: []string{"--protocol-version", "1999-01-01"},
			code:   exitHandshake, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_HANDSHAKE","message":"initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01, which sonde does not support (supported: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"}}`,
			errLine: "sonde: MCP_HANDSHAKE: initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01...",
		},
		{
			// A usage error is not a failure of the server: nothing on stdout.
			name: "json usage error", sub: []string{"call", "echo", "--json", "--args", "nope"},
			code: exitUsage, stdout: "",
			errLine: `sonde: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r := runSonde(t, "", f.cmd(tc.sub, tc.faults...)...)
			checkRun(t, r, tc.code, tc.errLine)
			switch {
			case tc.json:
				if strings.Count(r.stdout, "\n") != 1 || !sameJSON(t, r.stdout, tc.stdout) {
					t.Errorf("stdout = %s, want one line %s", r.stdout, tc.stdout)
				}
			case r.stdout != tc.stdout:
				t.Errorf("stdout = %q, want %q", r.stdout, tc.stdout)
			}
		})
	}
}

// TestCallJSONSpawnFailure: with --json a server that cannot start is
// reported on stdout too.
func TestCallJSONSpawnFailure(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	r := runSonde(t, "", "call", "echo", "--json", "--", missing)
	checkRun(t, r, exitSpawn, `sonde: MCP_SPAWN: cannot start "`+missing+`": executable not found (check the path or PATH)`+"\n")
	want := `{"ok":false,"error":{"code":"MCP_SPAWN","message":"cannot start \"` + missing + `\": executable not found (check the path or PATH)"}}`
	if !sameJSON(t, r.stdout, want) {
		t.Errorf("stdout = %s, want %s", r.stdout, want)
	}
}

// TestCallArgsFrom reads --args from a file and from stdin.
func TestCallArgsFrom(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "args.json")
	if err := os.WriteFile(file, []byte("  {\"value\": \"from a file\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
		{name: "file", args: "@" + file, code: exitOK, stdout: "from a file\n", started: 1},
		{name: "stdin", args: "@-", stdin: `{"value":"from stdin"}`, code: exitOK, stdout: "from stdin\n", started: 1},
		{name: "stdin not an object", args: "@-", stdin: `"from stdin"`, code: exitUsage,
			errLine: `sonde: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n"},
		{name: "empty stdin", args: "@-", stdin: "", code: exitUsage,
			errLine: `sonde: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n"},
		{name: "missing file", args: "@" + missing, code: exitUsage,
			errLine: "sonde: --args @" + missing + ": open " + missing + ": no such file or directory\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r := runSonde(t, tc.stdin, f.cmd([]string{"call", "echo", "--args", tc.args})...)
			checkRun(t, r, tc.code, tc.errLine)
			if r.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.stdout, tc.stdout)
			}
			f.assertStarted(tc.started)
		})
	}
}
