//go:build linux || darwin

package live_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// hostile is text a server may send that a terminal would obey: set the
// window title, write the clipboard, clear the screen, a C1 CSI, NUL.
const hostile = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31m\x00!"

// dangerous are the bytes that must not reach a terminal from a server.
var dangerous = []string{"\x1b", "\x07", "\x00", "\x7f", "\xc2\x9b", "\x9b"}

// runOnTerminal runs sonde (the test binary re-executed) with its stdout
// and stderr on a pseudo-terminal, as a user's shell would, and returns
// every byte the terminal received and the exit status. With pipe, stdout
// is a pipe instead (stderr stays on the terminal) and its bytes come back
// apart.
func runOnTerminal(t *testing.T, pipe bool, args ...string) (term, piped string, code int) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	cmd.Stdout, cmd.Stderr = tty, tty
	var out bytes.Buffer
	if pipe {
		cmd.Stdout = &out
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds it; the master reads EIO once the child is gone
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = io.Copy(&got, ptmx) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(clitest.RunBound):
		_ = cmd.Process.Kill()
		t.Fatalf("sonde %q did not end", args)
	}
	wg.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return got.String(), out.String(), cmd.ProcessState.ExitCode()
}

// TestServerTextNeverDrivesTheTerminal: what every headless command prints
// of a hostile server's text (tool names and descriptions, a tool's text,
// serverInfo, resource and prompt names, a JSON-RPC error message, the
// stderr tail of a crash) reaches the terminal with its escapes shown, not
// obeyed. The bytes are read from the terminal's side, and each case also
// checks that the server's escapes were there to show.
func TestServerTextNeverDrivesTheTerminal(t *testing.T) {
	value, _ := json.Marshal(map[string]string{"value": hostile})
	message, _ := json.Marshal(map[string]string{"message": hostile})
	for _, c := range []struct {
		name string
		sub  []string
		code int
		want string // the escaped form that shows the server sent it
	}{
		{"tools", []string{"tools"}, 0, `\u001b]0;pwned\u0007`},
		{"call text", []string{"call", "echo", "--args", string(value)}, 0, `\u001b]52;c;cHduZWQ=\u0007`},
		{"check serverInfo", []string{"check"}, 0, `\u001b[2J`},
		{"resources", []string{"resources"}, 0, `\u009b31m`},
		{"prompts", []string{"prompts"}, 0, `\u0000!`},
		{"error message", []string{"call", "fail", "--args", string(message)}, 3, `\u001b]0;pwned`},
		{"stderr tail of a crash", []string{"call", "crash"}, 5, `starting\u001b]0;pwned`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := clitest.NewFixture(t)
			got, _, code := runOnTerminal(t, false, f.Cmd(c.sub, "--fault", "hostile-text")...)
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%q", code, c.code, got)
			}
			for _, b := range dangerous {
				if strings.Contains(got, b) {
					t.Errorf("the terminal received %q:\n%q", b, got)
				}
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("the terminal did not show %s:\n%q", c.want, got)
			}
		})
	}
}

// TestRawAndPipesGetTheBytes: --raw hands a server's bytes to the terminal
// as they are (so the test above could fail), and a pipe always gets them
// (a script reading `sonde call` sees the exact text).
func TestRawAndPipesGetTheBytes(t *testing.T) {
	value, _ := json.Marshal(map[string]string{"value": hostile})
	f := clitest.NewFixture(t)
	got, _, code := runOnTerminal(t, false, f.Cmd([]string{"call", "echo", "--raw", "--args", string(value)})...)
	if code != 0 || !strings.Contains(got, "\x1b]0;pwned\x07") {
		t.Errorf("--raw: exit %d, terminal got %q", code, got)
	}
	f = clitest.NewFixture(t)
	term, piped, code := runOnTerminal(t, true, f.Cmd([]string{"call", "echo", "--args", string(value)})...)
	if code != 0 || !strings.Contains(piped, hostile) || strings.Contains(term, "\x1b") {
		t.Errorf("pipe: exit %d, pipe got %q, terminal %q", code, piped, term)
	}
}
