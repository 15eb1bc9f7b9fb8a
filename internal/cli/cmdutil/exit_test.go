package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestExitStatus runs each documented exit status through the command
// line against the fixture, and checks the single stderr line.
func TestExitStatus(t *testing.T) {
	hi := `{"value":"hi"}`
	cases := []struct {
		name    string
		args    func(t *testing.T, f *fixture) []string
		stdin   string
		code    int
		stdout  string   // exact stdout, when not "-"
		errLine string   // exact stderr, or a prefix of its one line when it ends in "..."
		errHas  []string // more text the stderr line must contain
		started int      // fixture processes that must have been started
	}{
		{
			name: "ok",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "echo", "--args", hi}) },
			code: exitOK, stdout: "hi\n", errLine: "", started: 1,
		},
		{
			name: "tool isError",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "tool-error"}) },
			code: exitToolError, stdout: "fixture tool error\n",
			errLine: "sonde: tool tool-error returned a result with isError\n", started: 1,
		},
		{
			name:  "script line failed",
			args:  func(t *testing.T, f *fixture) []string { return f.cmd([]string{"script", "-"}) },
			stdin: `{"method":"ping"}` + "\n" + `{"method":"tools/call","params":{"name":"fail"}}` + "\n",
			code:  exitToolError, stdout: "-",
			errLine: "sonde: 1 of 2 script lines failed\n", started: 1,
		},
		{
			name: "usage: no server command",
			args: func(t *testing.T, f *fixture) []string { return []string{"call", "echo", "--args", hi} },
			code: exitUsage, stdout: "",
			errLine: "sonde: no server command: put it after --, e.g. sonde call ... -- ./server --flag, or connect with --url URL\n",
		},
		{
			name: "usage: --args not JSON",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "echo", "--args", `{"value":`}) },
			code: exitUsage, stdout: "",
			errLine: `sonde: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n",
		},
		{
			name: "usage: --args not an object",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "echo", "--args", `["hi"]`}) },
			code: exitUsage, stdout: "",
			errLine: `sonde: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n",
		},
		{
			name: "usage: unknown flag",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "echo", "--bogus"}) },
			code: exitUsage, stdout: "",
			errLine: "sonde: unknown flag: --bogus (see sonde call --help)\n",
		},
		{
			name: "usage: bad --max-line-bytes",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"tools", "--max-line-bytes", "12x"}) },
			code: exitUsage, stdout: "",
			errLine: `sonde: invalid argument "12x" for "--max-line-bytes" flag: "12x" is not a positive size (e.g. 65536, 64KiB, 8MiB) (see sonde tools --help)` + "\n",
		},
		{
			name: "usage: zero --max-line-bytes",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"tools", "--max-line-bytes", "0"}) },
			code: exitUsage, stdout: "",
			errLine: `sonde: invalid argument "0" for "--max-line-bytes" flag: "0" is not a positive size...`,
		},
		{
			name: "usage: bad --env",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"tools", "--env", "NOEQUALS"}) },
			code: exitUsage, stdout: "",
			errLine: `sonde: --env "NOEQUALS": want KEY=VALUE` + "\n",
		},
		{
			name: "usage: --max-pending 0",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"tools", "--max-pending", "0"}) },
			code: exitUsage, stdout: "",
			errLine: "sonde: --max-pending must be at least 1\n",
		},
		{
			name: "usage: two tools",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "echo", "add"}) },
			code: exitUsage, stdout: "",
			errLine: "sonde: call takes exactly one TOOL before --: sonde call TOOL [--args JSON] -- COMMAND [ARG...]\n",
		},
		{
			name: "usage: unknown command",
			args: func(t *testing.T, f *fixture) []string { return []string{"bogus"} },
			code: exitUsage, stdout: "",
			errLine: `sonde: unknown command "bogus" (see sonde --help)...`,
		},
		{
			name: "MCP_ERROR",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "fail"}) },
			code: exitRemote, stdout: "",
			errLine: "sonde: MCP_ERROR: server error -32001: fixture failure\n", started: 1,
		},
		{
			name: "MCP_ERROR unknown tool",
			args: func(t *testing.T, f *fixture) []string { return f.cmd([]string{"call", "nope"}) },
			code: exitRemote, stdout: "",
			errLine: "sonde: MCP_ERROR: server error -32602: unknown tool: nope\n", started: 1,
		},
		{
			name: "MCP_TIMEOUT",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"call", "echo", "--args", hi, "--timeout", slowTimeout}, "--fault", "never-respond")
			},
			code: exitTimeout, stdout: "",
			errLine: "sonde: MCP_TIMEOUT: tools/call id 2: no response within " + slowTimeout + "\n", started: 1,
		},
		{
			name: "MCP_TIMEOUT in the handshake",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"tools", "--timeout", "200ms"}, "--fault", "no-initialize-response")
			},
			code: exitTimeout, stdout: "",
			errLine: "sonde: MCP_TIMEOUT: initialize id 1: no response within 200ms\n", started: 1,
		},
		{
			name: "MCP_PROCESS_EXIT",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"call", "echo", "--args", hi}, "--fault", "exit-mid-call")
			},
			code: exitExited, stdout: "",
			// "server exited" or "server closed its stdout", whichever the
			// client saw first.
			errLine: "sonde: MCP_PROCESS_EXIT: server ...", started: 1,
			errHas: []string{"(exit code 3)", "; stderr: fixture: exit-mid-call"},
		},
		{
			name: "MCP_PROTOCOL result and error",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"call", "echo", "--args", hi}, "--fault", "result-and-error")
			},
			code: exitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: tools/call id 2: invalid response: response has both result and error\n", started: 1,
		},
		{
			name: "MCP_PROTOCOL strict stdout noise",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"call", "echo", "--args", hi, "--strict"}, "--fault", "stdout-noise")
			},
			code: exitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: --strict: malformed line on stdout: line on stdout is not JSON...", started: 1,
		},
		{
			name: "MCP_PROTOCOL huge line",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"call", "echo", "--args", hi, "--max-line-bytes", "64KiB", "--kill-after", "300ms"}, "--fault", "huge-line")
			},
			code: exitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: server wrote a line over 65536 bytes (--max-line-bytes)...", started: 1,
		},
		{
			name: "MCP_SPAWN missing executable",
			args: func(t *testing.T, f *fixture) []string {
				missing := filepath.Join(t.TempDir(), "no-such-server")
				return []string{"tools", "--", missing, "--flag"}
			},
			code: exitSpawn, stdout: "",
			errLine: `sonde: MCP_SPAWN: cannot start "...`,
		},
		{
			name: "MCP_SPAWN not executable",
			args: func(t *testing.T, f *fixture) []string {
				path := filepath.Join(t.TempDir(), "server.txt")
				if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"tools", "--", path}
			},
			code: exitSpawn, stdout: "",
			errLine: `sonde: MCP_SPAWN: cannot start "...`,
		},
		{
			name: "MCP_HANDSHAKE",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"tools"}, "--protocol-version", "1999-01-01")
			},
			code: exitHandshake, stdout: "",
			errLine: "sonde: MCP_HANDSHAKE: initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01, which sonde does not support...",
			started: 1,
		},
		{
			// The demo pipelines two calls; with one allowed in flight (the
			// first never answers) the second is refused.
			name: "MCP_BUSY",
			args: func(t *testing.T, f *fixture) []string {
				return f.cmd([]string{"demo", "--text", "--max-pending", "1"}, "--fault", "never-respond")
			},
			code: exitBusy, stdout: "-",
			errLine: "sonde: MCP_BUSY: tools/call: 1 requests already in flight (--max-pending)\n", started: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r := runSonde(t, tc.stdin, tc.args(t, f)...)
			checkRun(t, r, tc.code, tc.errLine)
			for _, s := range tc.errHas {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q does not contain %q", r.stderr, s)
				}
			}
			if tc.stdout != "-" && r.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.stdout, tc.stdout)
			}
			f.assertStarted(tc.started)
		})
	}
}

// TestSpawnMessages checks that the two spawn failures say what is wrong.
func TestSpawnMessages(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "server.txt")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no-such-server")
	cases := []struct {
		name, argv0, want string
	}{
		{"missing", missing, `sonde: MCP_SPAWN: cannot start "` + missing + `": executable not found (check the path or PATH)`},
		{"not executable", plain, `sonde: MCP_SPAWN: cannot start "` + plain + `": permission denied (is it executable?)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runSonde(t, "", "check", "--", tc.argv0)
			checkRun(t, r, exitSpawn, tc.want+"\n")
		})
	}
}

// TestExitStatusValues pins the exit statuses to the numbers of
// docs/errors.md (the other tests use the constants), and the mapping from
// each error code to its status.
func TestExitStatusValues(t *testing.T) {
	consts := []struct {
		name      string
		got, want int
	}{
		{"ok", exitOK, 0}, {"tool error", exitToolError, 1}, {"usage", exitUsage, 2},
		{"MCP_ERROR", exitRemote, 3}, {"MCP_TIMEOUT", exitTimeout, 4}, {"MCP_PROCESS_EXIT", exitExited, 5},
		{"MCP_PROTOCOL", exitProtocol, 6}, {"MCP_SPAWN", exitSpawn, 7}, {"MCP_HANDSHAKE", exitHandshake, 8},
		{"MCP_BUSY", exitBusy, 9}, {"MCP_HTTP", exitHTTP, 10}, {"MCP_SESSION_EXPIRED", exitExpired, 11},
		{"MCP_URL_REQUIRED", exitURLRequired, 12}, {"interrupted", exitInterrupted, 130},
	}
	for _, c := range consts {
		if c.got != c.want {
			t.Errorf("exit status of %s is %d, want %d", c.name, c.got, c.want)
		}
	}
	codes := map[client.Code]int{
		client.CodeRemote: 3, client.CodeTimeout: 4, client.CodeProcessExit: 5, client.CodeClosed: 5,
		client.CodeProtocol: 6, client.CodeSpawn: 7, client.CodeHandshake: 8, client.CodeBusy: 9,
		client.CodeHTTP: 10, client.CodeExpired: 11, client.CodeURLRequired: 12, client.CodeAborted: 130,
	}
	for code, want := range codes {
		if got := codeExit(code); got != want {
			t.Errorf("codeExit(%s) = %d, want %d", code, got, want)
		}
	}
	// The help lists them.
	r := runSonde(t, "", "--help")
	checkRun(t, r, exitOK, "")
	for _, line := range []string{"  0    ok", "  2    usage error", "  9    MCP_BUSY ", "  12   MCP_URL_REQUIRED ", "  130  interrupted"} {
		if !strings.Contains(r.stdout, "\n"+line) {
			t.Errorf("help has no line %q", line)
		}
	}
}
