package connect_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

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
