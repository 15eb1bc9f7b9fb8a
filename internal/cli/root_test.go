package cli_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestDemo runs the walk-through against the fixture: the fast call (the
// second request) is answered before the slow one, and the narration shows
// it in that order.
func TestDemo(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"demo", "--text", "--slow", "1s"})...)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	slowSent := `(?m)^ +\+\S+  -> request  id 2   tools/call echo \{"delay_ms":1000,"value":"slow"\}$`
	fastSent := `(?m)^ +\+\S+  -> request  id 3   tools/call echo \{"delay_ms":0,"value":"fast"\}$`
	fastBack := `(?m)^ +\+\S+  <- response id 3   "fast"  \(resolved id 3 after \S+\)$`
	slowBack := `(?m)^ +\+\S+  <- response id 2   "slow"  \(resolved id 2 after \S+\)$`
	summary := []string{
		`(?m)^The server answered id 3 first\.`,
		`(?m)^  pending map after sending:  \{ 2: echo "slow",  3: echo "fast" \}$`,
	}
	clitest.CheckOrder(t, r.Stdout,
		append([]string{slowSent, fastSent, slowBack}, summary...),
		append([]string{fastBack, slowBack}, summary...))
	if !strings.HasPrefix(r.Stdout, "sonde demo: responses are matched by id, never by order\n") {
		t.Errorf("output starts %q", r.Stdout[:min(len(r.Stdout), 80)])
	}
}

// TestDemoUsage: the server command must come right after --.
func TestDemoUsage(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		errLine string
	}{
		{"argument", []string{"demo", "extra"}, "sonde: demo takes no arguments (a server command goes after --)\n"},
		{"argument before --", []string{"demo", "extra", "--", "server"}, "sonde: demo: put the server command after --\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", tc.args...)
			clitest.CheckRun(t, r, cmdutil.ExitUsage, tc.errLine)
			if r.Stdout != "" {
				t.Errorf("stdout = %q", r.Stdout)
			}
		})
	}
}

// TestTrace checks that --trace shows the process, every frame with its
// arrow, and the outcome of each request, on stderr only.
func TestTrace(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"traced"}`, "--trace", "--kill-after", "10s"}, "--fault", "stdout-noise")...)
	if r.Code != cmdutil.ExitOK || clitest.SondeLine(r.Stderr) != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if r.Stdout != "traced\n" {
		t.Errorf("stdout = %q (the trace must go to stderr)", r.Stdout)
	}
	pids := f.PIDs()
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	pid := strconv.Itoa(pids[0])
	started := `(?m)^ +\+\S+ process started, pid ` + pid + `: \S+ fixture --pid-file \S+ --fault stdout-noise$`
	ended := `(?m)^ +\+\S+ process ` + pid + ` ended: exit code 0$`
	noise := `(?m)^ +\+\S+ <- +invalid +31B  malformed: line on stdout is not JSON: servers must log to stderr  fixture noise: this is not JSON$`
	clitest.CheckOrder(t, r.Stderr,
		// What sonde wrote.
		[]string{
			started,
			`(?m)^ +\+\S+ -> id 1 +initialize +\d+B  sent  \{"jsonrpc":"2\.0","id":1,"method":"initialize"`,
			`(?m)^ +\+\S+ -> +notifications/initialized +\d+B  sent  `,
			`(?m)^ +\+\S+ -> id 2 +tools/call +\d+B  sent  \{"jsonrpc":"2\.0","id":2,"method":"tools/call"`,
			ended,
		},
		// What it read, and the outcome of each request.
		[]string{
			started,
			noise,
			`(?m)^ +\+\S+ <- id 1 +response +\d+B  resolved id 1 after `,
			`(?m)^ +\+\S+ +id 1 +initialize +resolved after `,
			noise,
			`(?m)^ +\+\S+ <- id 2 +response +\d+B  resolved id 2 after \S+  \{"jsonrpc":"2\.0","id":2,"result":`,
			`(?m)^ +\+\S+ +id 2 +tools/call echo +resolved after `,
			ended,
		})
	if n := strings.Count(r.Stderr, "fixture noise: this is not JSON\n"); n != 2 {
		t.Errorf("%d noise lines traced, want 2 (one before each response)", n)
	}
}

// TestVersion checks --version, -v and the version subcommand.
func TestVersion(t *testing.T) {
	want := "sonde " + cmdutil.VersionString() + "\n"
	if !strings.HasPrefix(want, "sonde "+cmdutil.Version) {
		t.Fatalf("cmdutil.VersionString() = %q does not start with the stamped version %q", cmdutil.VersionString(), cmdutil.Version)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		t.Run(args[0], func(t *testing.T) {
			r := clitest.RunSonde(t, "", args...)
			clitest.CheckRun(t, r, cmdutil.ExitOK, "")
			if r.Stdout != want {
				t.Errorf("stdout = %q, want %q", r.Stdout, want)
			}
		})
	}
	r := clitest.RunSonde(t, "", "version", "extra")
	clitest.CheckRun(t, r, cmdutil.ExitUsage, `sonde: unknown command "extra" for "sonde version"`+"\n")
}

// TestFixtureHelp: `sonde fixture --help` lists every fault with its
// summary.
func TestFixtureHelp(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		t.Run(flag, func(t *testing.T) {
			r := clitest.RunSonde(t, "", "fixture", flag)
			clitest.CheckRun(t, r, cmdutil.ExitOK, "")
			all := fixtures.Faults()
			if len(all) < 10 {
				t.Fatalf("only %d faults", len(all))
			}
			for _, fault := range all {
				re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(fault.Name) + ` +` + regexp.QuoteMeta(fault.Summary) + `$`)
				if !re.MatchString(r.Stdout) {
					t.Errorf("help does not list %s: %s", fault.Name, fault.Summary)
				}
			}
		})
	}
}

// TestFixtureInProcess runs `sonde fixture` on in-memory streams: it
// answers a request, and a bad flag is its own exit status with its own
// message (no "sonde:" line).
func TestFixtureInProcess(t *testing.T) {
	r := clitest.RunSonde(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n", "fixture")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if !clitest.SameJSON(t, r.Stdout, `{"jsonrpc":"2.0","id":7,"result":{}}`) {
		t.Errorf("stdout = %q", r.Stdout)
	}

	r = clitest.RunSonde(t, "", "fixture", "--fault", "bogus")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, `unknown fault "bogus"`) || clitest.SondeLine(r.Stderr) != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// The interactive UI reports a server that cannot start like every other
// command, before it takes the terminal.
func TestTUISpawnFailure(t *testing.T) {
	r := clitest.RunSonde(t, "", "--", "sonde-no-such-server-xyz")
	clitest.CheckRun(t, r, cmdutil.ExitSpawn, `sonde: MCP_SPAWN: cannot start "sonde-no-such-server-xyz": executable not found (check the path or PATH)`+"\n")
}
