package cli_test

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

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
