package tap_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// headlessCall starts `sonde call echo` on sonde's fixture with the
// breakpoint flags given, its sessions folder in a temporary SONDE_HOME and
// its --record capture in rec (the fixture's processes checked gone at
// the end); wait returns its stdout, stderr and error.
func headlessCall(t *testing.T, value string, flags ...string) (rec string, wait func() (string, string, error)) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	rec = filepath.Join(t.TempDir(), "call.jsonl")
	args := append([]string{"call", "echo", "--args", `{"value":"` + value + `"}`, "--record", rec}, flags...)
	cmd := exec.Command(os.Args[0], clitest.NewFixture(t).Cmd(args)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return rec, func() (string, string, error) {
		err := cmd.Wait()
		done = true
		return out.String(), errb.String(), err
	}
}

func recorded(t *testing.T, rec string) string {
	t.Helper()
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCallBreakEdit: sonde call --break holds the echo answer; sonde
// breaks edit (another process, through the call's socket in the sessions
// folder) changes it, and the call prints the edit; the call's --record
// capture has the step.
func TestCallBreakEdit(t *testing.T) {
	rec, wait := headlessCall(t, "original", "--break", "dir:in kind:response tool:echo", "--break-timeout", "0")
	h := waitBreaks(t, "call", 1)[0]
	if !strings.Contains(string(h.Frame), "original") {
		t.Fatalf("held %s", h.Frame)
	}
	edit := `{"jsonrpc":"2.0","id":` + h.ID + `,"result":{"content":[{"type":"text","text":"edited by sonde breaks"}]}}`
	if _, err := sondeBreaks(t, edit, "--session", "call", "edit", h.Handle, "--json", "-"); err != nil {
		t.Fatalf("sonde breaks edit: %v", err)
	}
	out, stderr, err := wait()
	if err != nil || !strings.Contains(out, "edited by sonde breaks") || strings.Contains(out, "original") {
		t.Fatalf("sonde call: %v\n%s\n%s", err, out, stderr)
	}
	if r := recorded(t, rec); !strings.Contains(r, "edited by sonde breaks") || !strings.Contains(r, `"edited"`) {
		t.Errorf("the capture lacks the edit:\n%s", r)
	}
}

// TestCallBreakAnswer: a held tools/call request answered through sonde
// breaks answer: the call prints that answer, with its own id.
func TestCallBreakAnswer(t *testing.T) {
	_, wait := headlessCall(t, "original", "--break", "dir:out method:tools/call", "--break-timeout", "0")
	h := waitBreaks(t, "call", 1)[0]
	if _, err := sondeBreaks(t, "", "--session", "call", "answer", h.Handle, "--result", `{"content":[{"type":"text","text":"answered in the server's place"}]}`); err != nil {
		t.Fatalf("sonde breaks answer: %v", err)
	}
	out, stderr, err := wait()
	if err != nil || !strings.Contains(out, "answered in the server's place") {
		t.Fatalf("sonde call: %v\n%s\n%s", err, out, stderr)
	}
}

// TestCallBreakAutoContinue: with nobody acting, the held answer goes on
// unchanged after --break-timeout, and the capture says so.
func TestCallBreakAutoContinue(t *testing.T) {
	rec, wait := headlessCall(t, "original", "--break", "dir:in kind:response tool:echo", "--break-timeout", "300ms")
	out, stderr, err := wait()
	if err != nil || !strings.Contains(out, "original") {
		t.Fatalf("sonde call: %v\n%s\n%s", err, out, stderr)
	}
	if r := recorded(t, rec); !strings.Contains(r, `"by":"timeout"`) {
		t.Errorf("the capture does not say the answer went on by itself:\n%s", r)
	}
}

// TestCallBreakDrop: a dropped answer never reaches the call, which then
// times out (held time did not count; --timeout runs again after the drop)
// with its stable code.
func TestCallBreakDrop(t *testing.T) {
	_, wait := headlessCall(t, "original", "--break", "dir:in kind:response tool:echo", "--break-timeout", "0", "--timeout", "1s")
	h := waitBreaks(t, "call", 1)[0]
	if _, err := sondeBreaks(t, "", "--session", "call", "drop", h.Handle); err != nil {
		t.Fatalf("sonde breaks drop: %v", err)
	}
	out, stderr, err := wait()
	if err == nil || !strings.Contains(stderr, "MCP_TIMEOUT") || strings.Contains(out, "original") {
		t.Fatalf("sonde call after a drop: %v\n%s\n%s", err, out, stderr)
	}
}
