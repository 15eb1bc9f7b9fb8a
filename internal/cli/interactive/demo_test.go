package interactive_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/ui/lesson"
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
	// The steps it does not narrate are named, all of them (#33: --text
	// showed a few steps and said nothing of the rest).
	titles := lesson.Titles()
	if !strings.Contains(r.Stdout, fmt.Sprintf("That was step 1 of the lesson's %d.", len(titles))) || len(titles) < 10 ||
		!strings.Contains(r.Stdout, fmt.Sprintf("  %2d. %s\n", len(titles), titles[len(titles)-1])) ||
		!strings.Contains(r.Stdout, "   2. "+titles[1]+"\n") {
		t.Errorf("the other steps are not named:\n%s", r.Stdout)
	}
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
