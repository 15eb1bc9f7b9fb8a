package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// runBinary runs the sonde binary (this test binary re-executed as it)
// with args, as a user's shell would, and returns its exit status and
// output.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(clitest.ChildEnv(), "COLUMNS=80")
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("sonde %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errw.String()
}

// TestHelpFitsAScreen: sonde --help is at most 24 lines of at most 80
// columns, names every command in a group, and points to the flags and
// the exit statuses instead of listing them.
func TestHelpFitsAScreen(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runBinary(t, args...)
		if code != cmdutil.ExitOK {
			t.Fatalf("sonde %q: exit %d", args, code)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) > 24 {
			t.Errorf("sonde %q: %d lines, want at most 24:\n%s", args, len(lines), out)
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("sonde %q: a line of %d columns: %q", args, n, l)
			}
		}
		for _, want := range []string{"Inspect a server:", "Sit beside a host:", "Read a capture:", "sonde help exit-codes", "sonde help flags"} {
			if !strings.Contains(out, want) {
				t.Errorf("sonde %q lacks %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "MCP_TIMEOUT") || strings.Contains(out, "--oauth") {
			t.Errorf("sonde %q still lists exit statuses or flags:\n%s", args, out)
		}
		// every command a user can run is named in the help
		for _, name := range []string{"call", "tools", "tap", "sessions", "watch", "replay", "lint", "stats", "diff", "export", "doctor", "config", "demo", "mcp", "prompts", "log-level"} {
			if !containsWord(out, name) {
				t.Errorf("sonde %q does not name the command %s", args, name)
			}
		}
	}
}

func containsWord(text, w string) bool {
	for _, f := range strings.Fields(text) {
		if f == w {
			return true
		}
	}
	return false
}

// TestHelpExitCodesInOnePlace: the exit-status table is shown by sonde
// help exit-codes, and no command's help repeats it.
func TestHelpExitCodesInOnePlace(t *testing.T) {
	code, out, _ := runBinary(t, "help", "exit-codes")
	if code != cmdutil.ExitOK || strings.TrimSpace(out) != cmdutil.ExitCodesHelp {
		t.Errorf("sonde help exit-codes: exit %d, output:\n%s", code, out)
	}
	for _, sub := range []string{"call", "tools", "check", "script", "bench", "replay", "prompts", "tap", "sessions"} {
		_, out, _ := runBinary(t, sub, "--help")
		if strings.Contains(out, "130  interrupted") {
			t.Errorf("sonde %s --help repeats the exit-status table", sub)
		}
		if i, j := strings.Index(out, "Exit status: see sonde help exit-codes."), strings.Index(out, "Usage:"); i >= 0 && i > j {
			t.Errorf("sonde %s --help: the pointer comes after the usage", sub)
		}
	}
	_, out, _ = runBinary(t, "call", "--help")
	if !strings.Contains(out, "Exit status: see sonde help exit-codes.") {
		t.Errorf("sonde call --help does not point to sonde help exit-codes:\n%s", out)
	}
	_, out, _ = runBinary(t, "help", "flags")
	if !strings.Contains(out, "--server NAME") || !strings.Contains(out, "--url URL") {
		t.Errorf("sonde help flags lacks the UI's flags:\n%s", out)
	}
}

// TestDidYouMean: a mistyped command, subcommand or flag is a usage error
// that names what was meant; a word nothing is near is the old error.
func TestDidYouMean(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"stts", "x.jsonl"}, `unknown command "stts" for "sonde"; did you mean stats?`},
		{[]string{"sesions"}, `did you mean sessions?`},
		{[]string{"config", "lsit"}, `unknown command "lsit" for "sonde config"; did you mean list?`},
		{[]string{"breaks", "relase", "1"}, `did you mean release?`},
		{[]string{"stats", "--fitler", "x", "a.jsonl"}, `unknown flag: --fitler; did you mean --filter?`},
		{[]string{"tap", "--lsten", "127.0.0.1:0"}, `did you mean --listen?`},
		{[]string{"sessions", "--jsn"}, `did you mean --json?`},
		{[]string{"zzzzzz"}, `unknown command "zzzzzz" (see sonde --help); a server command goes after --`},
	}
	for _, c := range cases {
		code, out, errw := runBinary(t, c.args...)
		if code != cmdutil.ExitUsage || out != "" || !strings.Contains(errw, c.want) {
			t.Errorf("sonde %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errw, c.want)
		}
		if strings.Count(strings.TrimSpace(errw), "\n") != 0 {
			t.Errorf("sonde %q: stderr is not one line: %q", c.args, errw)
		}
	}
}
