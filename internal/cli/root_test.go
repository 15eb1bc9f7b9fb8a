package cli

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
)

// TestDemo runs the walk-through against the fixture: the fast call (the
// second request) is answered before the slow one, and the narration shows
// it in that order.
func TestDemo(t *testing.T) {
	f := newFixture(t)
	r := runSonde(t, "", f.cmd([]string{"demo", "--text", "--slow", "1s"})...)
	checkRun(t, r, exitOK, "")
	slowSent := `(?m)^ +\+\S+  -> request  id 2   tools/call echo \{"delay_ms":1000,"value":"slow"\}$`
	fastSent := `(?m)^ +\+\S+  -> request  id 3   tools/call echo \{"delay_ms":0,"value":"fast"\}$`
	fastBack := `(?m)^ +\+\S+  <- response id 3   "fast"  \(resolved id 3 after \S+\)$`
	slowBack := `(?m)^ +\+\S+  <- response id 2   "slow"  \(resolved id 2 after \S+\)$`
	summary := []string{
		`(?m)^The server answered id 3 first\.`,
		`(?m)^  pending map after sending:  \{ 2: echo "slow",  3: echo "fast" \}$`,
	}
	checkOrder(t, r.stdout,
		append([]string{slowSent, fastSent, slowBack}, summary...),
		append([]string{fastBack, slowBack}, summary...))
	if !strings.HasPrefix(r.stdout, "sonde demo: responses are matched by id, never by order\n") {
		t.Errorf("output starts %q", r.stdout[:min(len(r.stdout), 80)])
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
			r := runSonde(t, "", tc.args...)
			checkRun(t, r, exitUsage, tc.errLine)
			if r.stdout != "" {
				t.Errorf("stdout = %q", r.stdout)
			}
		})
	}
}

// TestTrace checks that --trace shows the process, every frame with its
// arrow, and the outcome of each request, on stderr only.
func TestTrace(t *testing.T) {
	f := newFixture(t)
	r := runSonde(t, "", f.cmd([]string{"call", "echo", "--args", `{"value":"traced"}`, "--trace", "--kill-after", "10s"}, "--fault", "stdout-noise")...)
	if r.code != exitOK || sondeLine(r.stderr) != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != "traced\n" {
		t.Errorf("stdout = %q (the trace must go to stderr)", r.stdout)
	}
	pids := f.pids()
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	pid := strconv.Itoa(pids[0])
	started := `(?m)^ +\+\S+ process started, pid ` + pid + `: \S+ fixture --pid-file \S+ --fault stdout-noise$`
	ended := `(?m)^ +\+\S+ process ` + pid + ` ended: exit code 0$`
	noise := `(?m)^ +\+\S+ <- +invalid +31B  malformed: line on stdout is not JSON: servers must log to stderr  fixture noise: this is not JSON$`
	checkOrder(t, r.stderr,
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
	if n := strings.Count(r.stderr, "fixture noise: this is not JSON\n"); n != 2 {
		t.Errorf("%d noise lines traced, want 2 (one before each response)", n)
	}
}

// TestVersion checks --version, -v and the version subcommand.
func TestVersion(t *testing.T) {
	want := "sonde " + versionString() + "\n"
	if !strings.HasPrefix(want, "sonde "+version) {
		t.Fatalf("versionString() = %q does not start with the stamped version %q", versionString(), version)
	}
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		t.Run(args[0], func(t *testing.T) {
			r := runSonde(t, "", args...)
			checkRun(t, r, exitOK, "")
			if r.stdout != want {
				t.Errorf("stdout = %q, want %q", r.stdout, want)
			}
		})
	}
	r := runSonde(t, "", "version", "extra")
	checkRun(t, r, exitUsage, `sonde: unknown command "extra" for "sonde version"`+"\n")
}

// TestFixtureHelp: `sonde fixture --help` lists every fault with its
// summary.
func TestFixtureHelp(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		t.Run(flag, func(t *testing.T) {
			r := runSonde(t, "", "fixture", flag)
			checkRun(t, r, exitOK, "")
			all := fixtures.Faults()
			if len(all) < 10 {
				t.Fatalf("only %d faults", len(all))
			}
			for _, fault := range all {
				re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(fault.Name) + ` +` + regexp.QuoteMeta(fault.Summary) + `$`)
				if !re.MatchString(r.stdout) {
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
	r := runSonde(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n", "fixture")
	checkRun(t, r, exitOK, "")
	if !sameJSON(t, r.stdout, `{"jsonrpc":"2.0","id":7,"result":{}}`) {
		t.Errorf("stdout = %q", r.stdout)
	}

	r = runSonde(t, "", "fixture", "--fault", "bogus")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `unknown fault "bogus"`) || sondeLine(r.stderr) != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// The interactive UI reports a server that cannot start like every other
// command, before it takes the terminal.
func TestTUISpawnFailure(t *testing.T) {
	r := runSonde(t, "", "--", "sonde-no-such-server-xyz")
	checkRun(t, r, exitSpawn, `sonde: MCP_SPAWN: cannot start "sonde-no-such-server-xyz": executable not found (check the path or PATH)`+"\n")
}
