package cmdutil_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/manager"
)

// onFixture is the args of a case that runs sonde sub against the case's
// fixture: f.Cmd(sub).
func onFixture(sub ...string) func(*testing.T, *clitest.Fixture) []string {
	return func(_ *testing.T, f *clitest.Fixture) []string { return f.Cmd(sub) }
}

// TestExitStatus runs each documented exit status through the command
// line against the fixture, and checks the single stderr line.
func TestExitStatus(t *testing.T) {
	hi := `{"value":"hi"}`
	cases := []struct {
		name    string
		args    func(t *testing.T, f *clitest.Fixture) []string
		stdin   string
		code    int
		stdout  string   // exact stdout, when not "-"
		errLine string   // exact stderr, or a prefix of its one line when it ends in "..."
		errHas  []string // more text the stderr line must contain
		started int      // fixture processes that must have been started
	}{
		{
			name: "ok",
			args: onFixture("call", "echo", "--args", hi),
			code: cmdutil.ExitOK, stdout: "hi\n", errLine: "", started: 1,
		},
		{
			name: "tool isError",
			args: onFixture("call", "tool-error"),
			code: cmdutil.ExitToolError, stdout: "fixture tool error\n",
			errLine: "sonde: tool tool-error returned a result with isError\n", started: 1,
		},
		{
			name:  "script line failed",
			args:  onFixture("script", "-"),
			stdin: `{"method":"ping"}` + "\n" + `{"method":"tools/call","params":{"name":"fail"}}` + "\n",
			code:  cmdutil.ExitToolError, stdout: "-",
			errLine: "sonde: 1 of 2 script lines failed\n", started: 1,
		},
		{
			name: "usage: no server command",
			args: func(t *testing.T, f *clitest.Fixture) []string { return []string{"call", "echo", "--args", hi} },
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: no server command: put it after --, e.g. sonde call ... -- ./server --flag, or connect with --url URL\n",
		},
		{
			name: "usage: --args not JSON",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", `{"value":`})
			},
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: --args is not valid JSON: unexpected end of JSON input (line 1, column 10)\n  {\"value\":\n           ^\n",
		},
		{
			name: "usage: --args not an object",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", `["hi"]`})
			},
			code: cmdutil.ExitUsage, stdout: "",
			errLine: `sonde: --args is a JSON array, not an object: --args must be a JSON object, e.g. '{"value":"hi"}'` + "\n",
		},
		{
			name: "usage: unknown flag",
			args: onFixture("call", "echo", "--bogus"),
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: unknown flag: --bogus (see sonde call --help)\n",
		},
		{
			name: "usage: bad --max-line-bytes",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"tools", "--max-line-bytes", "12x"})
			},
			code: cmdutil.ExitUsage, stdout: "",
			errLine: `sonde: invalid argument "12x" for "--max-line-bytes" flag: "12x" is not a positive size (e.g. 65536, 64KiB, 8MiB) (see sonde tools --help)` + "\n",
		},
		{
			name: "usage: zero --max-line-bytes",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"tools", "--max-line-bytes", "0"})
			},
			code: cmdutil.ExitUsage, stdout: "",
			errLine: `sonde: invalid argument "0" for "--max-line-bytes" flag: "0" is not a positive size...`,
		},
		{
			name: "usage: bad --env",
			args: onFixture("tools", "--env", "NOEQUALS"),
			code: cmdutil.ExitUsage, stdout: "",
			// The entry is not shown: without "=" it may be a pasted secret.
			errLine: `sonde: --env: an entry has no "=": want KEY=VALUE (the entry is not shown: it may be a secret)` + "\n",
		},
		{
			name: "usage: --max-pending 0",
			args: onFixture("tools", "--max-pending", "0"),
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: --max-pending must be at least 1\n",
		},
		{
			name: "usage: two tools",
			args: onFixture("call", "echo", "add"),
			code: cmdutil.ExitUsage, stdout: "",
			errLine: "sonde: call takes exactly one TOOL before --: sonde call TOOL [--args JSON] -- COMMAND [ARG...]\n",
		},
		{
			name: "usage: unknown command",
			args: func(t *testing.T, f *clitest.Fixture) []string { return []string{"bogus"} },
			code: cmdutil.ExitUsage, stdout: "",
			errLine: `sonde: unknown command "bogus" (see sonde --help)...`,
		},
		{
			name: "MCP_ERROR",
			args: onFixture("call", "fail"),
			code: cmdutil.ExitRemote, stdout: "",
			errLine: "sonde: MCP_ERROR: server error -32001: fixture failure\n", started: 1,
		},
		{
			name: "MCP_ERROR unknown tool",
			args: onFixture("call", "nope"),
			code: cmdutil.ExitRemote, stdout: "",
			errLine: "sonde: MCP_ERROR: server error -32602: unknown tool: nope\n", started: 1,
		},
		{
			name: "MCP_TIMEOUT",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", hi, "--timeout", clitest.SlowTimeout}, "--fault", "never-respond")
			},
			code: cmdutil.ExitTimeout, stdout: "",
			errLine: "sonde: MCP_TIMEOUT: tools/call id 2: no response within " + clitest.SlowTimeout + "; ...", started: 1,
		},
		{
			name: "MCP_TIMEOUT in the handshake",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"tools", "--timeout", "200ms"}, "--fault", "no-initialize-response")
			},
			code: cmdutil.ExitTimeout, stdout: "",
			errLine: "sonde: MCP_TIMEOUT: initialize id 1: no response within 200ms; ...", started: 1,
		},
		{
			name: "MCP_PROCESS_EXIT",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", hi}, "--fault", "exit-mid-call")
			},
			code: cmdutil.ExitExited, stdout: "",
			// "server exited" or "server closed its stdout", whichever the
			// client saw first.
			errLine: "sonde: MCP_PROCESS_EXIT: server ...", started: 1,
			errHas: []string{"(exit code 3)", "; stderr: fixture: exit-mid-call"},
		},
		{
			name: "MCP_PROTOCOL result and error",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", hi}, "--fault", "result-and-error")
			},
			code: cmdutil.ExitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: tools/call id 2: invalid response: response has both result and error (execution uncertain: the tool is not read-only and may have run; check before calling it again)\n", started: 1,
		},
		{
			name: "MCP_PROTOCOL strict stdout noise",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", hi, "--strict"}, "--fault", "stdout-noise")
			},
			code: cmdutil.ExitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: --strict: malformed line on stdout: line on stdout is not JSON...", started: 1,
		},
		{
			name: "MCP_PROTOCOL huge line",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"call", "echo", "--args", hi, "--max-line-bytes", "64KiB", "--kill-after", "300ms"}, "--fault", "huge-line")
			},
			code: cmdutil.ExitProtocol, stdout: "",
			errLine: "sonde: MCP_PROTOCOL: server wrote a line over 65536 bytes (--max-line-bytes)...", started: 1,
		},
		{
			name: "MCP_SPAWN missing executable",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				missing := filepath.Join(t.TempDir(), "no-such-server")
				return []string{"tools", "--", missing, "--flag"}
			},
			code: cmdutil.ExitSpawn, stdout: "",
			errLine: `sonde: MCP_SPAWN: cannot start "...`,
		},
		{
			name: "MCP_SPAWN not executable",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				path := filepath.Join(t.TempDir(), "server.txt")
				clitest.WriteTestFile(t, path, "#!/bin/sh\nexit 0\n")
				return []string{"tools", "--", path}
			},
			code: cmdutil.ExitSpawn, stdout: "",
			errLine: `sonde: MCP_SPAWN: cannot start "...`,
		},
		{
			name: "MCP_HANDSHAKE",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"tools"}, "--protocol-version", "1999-01-01")
			},
			code: cmdutil.ExitHandshake, stdout: "",
			errLine: "sonde: MCP_HANDSHAKE: initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01, which sonde does not support...",
			started: 1,
		},
		{
			// The demo pipelines two calls; with one allowed in flight (the
			// first never answers) the second is refused.
			name: "MCP_BUSY",
			args: func(t *testing.T, f *clitest.Fixture) []string {
				return f.Cmd([]string{"demo", "--text", "--max-pending", "1"}, "--fault", "never-respond")
			},
			code: cmdutil.ExitBusy, stdout: "-",
			errLine: "sonde: MCP_BUSY: tools/call: 1 requests already in flight (--max-pending)\n", started: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, tc.stdin, tc.args(t, f)...)
			clitest.CheckRun(t, r, tc.code, tc.errLine)
			for _, s := range tc.errHas {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr %q does not contain %q", r.Stderr, s)
				}
			}
			if tc.stdout != "-" && r.Stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.Stdout, tc.stdout)
			}
			f.AssertStarted(tc.started)
		})
	}
}

// TestSpawnMessages checks that the two spawn failures say what is wrong.
func TestSpawnMessages(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "server.txt")
	clitest.WriteTestFile(t, plain, "#!/bin/sh\nexit 0\n")
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
			r := clitest.RunSonde(t, "", "check", "--", tc.argv0)
			clitest.CheckRun(t, r, cmdutil.ExitSpawn, tc.want+"\n")
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
		{"ok", cmdutil.ExitOK, 0}, {"tool error", cmdutil.ExitToolError, 1}, {"usage", cmdutil.ExitUsage, 2},
		{"MCP_ERROR", cmdutil.ExitRemote, 3}, {"MCP_TIMEOUT", cmdutil.ExitTimeout, 4}, {"MCP_PROCESS_EXIT", cmdutil.ExitExited, 5},
		{"MCP_PROTOCOL", cmdutil.ExitProtocol, 6}, {"MCP_SPAWN", cmdutil.ExitSpawn, 7}, {"MCP_HANDSHAKE", cmdutil.ExitHandshake, 8},
		{"MCP_BUSY", cmdutil.ExitBusy, 9}, {"MCP_HTTP", cmdutil.ExitHTTP, 10}, {"MCP_SESSION_EXPIRED", cmdutil.ExitExpired, 11},
		{"MCP_URL_REQUIRED", cmdutil.ExitURLRequired, 12}, {"interrupted", cmdutil.ExitInterrupted, 130},
	}
	for _, c := range consts {
		if c.got != c.want {
			t.Errorf("exit status of %s is %d, want %d", c.name, c.got, c.want)
		}
	}
	codes := map[client.Code]int{
		client.CodeRemote: 3, client.CodeTimeout: 4, client.CodeProcessExit: 5, client.CodeClosed: 5,
		client.CodeProtocol: 6, client.CodeSpawn: 7, client.CodeHandshake: 8, client.CodeBusy: 9,
		client.CodeHTTP: 10, client.CodeExpired: 11, client.CodeURLRequired: 12, client.CodeAborted: 130, client.CodeFlood: 6, manager.CodeQuarantined: 13,
	}
	for code, want := range codes {
		if got := cmdutil.CodeExit(code); got != want {
			t.Errorf("cmdutil.CodeExit(%s) = %d, want %d", code, got, want)
		}
	}
	// sonde help exit-codes lists them (the one place the table is).
	r := clitest.RunSonde(t, "", "help", "exit-codes")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	for _, line := range []string{"  0    ok", "  2    usage error", "  9    MCP_BUSY ", "  12   MCP_URL_REQUIRED ", "  130  interrupted"} {
		if !strings.Contains(r.Stdout, "\n"+line) {
			t.Errorf("help has no line %q", line)
		}
	}
}
