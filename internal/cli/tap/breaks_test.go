package tap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestBreaksFlags: a wrong --break, --breaks line or --break-timeout is a
// usage error naming it, before the server starts; a tap without a socket
// says its breakpoints are off and forwards as without them.
func TestBreaksFlags(t *testing.T) {
	fx := clitest.NewFixture(t)
	bad := filepath.Join(t.TempDir(), "breaks.txt")
	os.WriteFile(bad, []byte("# comment\n\ndir:in\nmethod:\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--break", "tool:"}, "--break: breakpoint"},
		{[]string{"--break", " "}, "needs a query"},
		{[]string{"--breaks", bad}, "breaks.txt:4:"},
		{[]string{"--breaks", filepath.Join(t.TempDir(), "none")}, "--breaks:"},
		{[]string{"--break-timeout", "-1s"}, "--break-timeout"},
	} {
		r := clitest.RunSonde(t, "", append(append([]string{"tap", "--no-record"}, tc.args...), append([]string{"--"}, fx.Argv()...)...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", tc.args, r.Code, tc.want, r.Stderr)
		}
	}
	fx.AssertStarted(0)
	h := startHost(t, nil, append([]string{os.Args[0], "tap", "--no-record", "--break", "kind:response", "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 || !strings.Contains(h.stderr(), "breakpoints are off") {
		t.Errorf("without a socket: exit %d\n%s", code, h.stderr())
	}
}

// TestBreaksCommand: sonde breaks against a live tap: the table of
// breakpoints and held frames, add/off/on/rm, a refusal (answer of an
// answer) that leaves the frame held, release; the recording notes the
// breakpoints and each step.
func TestBreaksCommand(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", "brk", "--break", "dir:in tool:echo", "--break-timeout", "0", "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.write(initialized, echoCall(2, "held here", 0))
	held := heldNow(t, 1)
	r := clitest.RunSonde(t, "", "breaks")
	clitest.CheckRun(t, r, 0, "")
	for _, want := range []string{"dir:in tool:echo", held[0].Handle, "tools/call echo", "until told"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("sonde breaks: no %q\n%s", want, r.Stdout)
		}
	}
	if r := clitest.RunSonde(t, "", "__complete", "breaks", "release", ""); !strings.Contains(r.Stdout, held[0].Handle+"\tin response id 2 tools/call") {
		t.Errorf("completion of a handle:\n%s%s", r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{{"add", "method:ping"}, {"off", "2"}, {"on", "2"}, {"rm", "2"}} {
		clitest.CheckRun(t, clitest.RunSonde(t, "", append([]string{"breaks"}, args...)...), 0, "")
	}
	r = clitest.RunSonde(t, "", "breaks", "answer", held[0].Handle, "--result", "{}")
	if r.Code != 2 || !strings.Contains(r.Stderr, "not a request") {
		t.Errorf("answer of an answer: exit %d\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(h.stdoutText(), "held here") {
		t.Fatal("the held answer reached the host")
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "release", held[0].Handle), 0, "")
	h.await("held here", 2)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	text := notes(t, sessionFile(t, home))
	for _, want := range []string{"breakpoint 1: dir:in tool:echo", "breakpoints changed by a watcher", "breakpoint 1 held h1", "breakpoint 1 released h1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording's notes have no %q:\n%s", want, text)
		}
	}
	if r := clitest.RunSonde(t, "", "breaks"); r.Code != 2 {
		t.Errorf("after the end: exit %d\n%s", r.Code, r.Stderr)
	}
}
