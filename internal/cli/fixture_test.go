package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

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
