package interactive_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestTUIToolsFilterAndQuit (#33): in the Tools pane a filter starts with
// / only, and while it is typed it takes every key (g, z, q and the digits
// too, which act in the list); enter keeps it and returns to the list. q
// with a call in flight asks first: another key stays, q again quits.
func TestTUIToolsFilterAndQuit(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd(nil))
	tt.waitFor("the handshake", handshake...)
	tt.keys("3")
	tt.waitFor("the focus on Tools", `^enter call`, `^│› echo\s`)

	// "a" in the list starts nothing; after /, every key is the filter's.
	tt.keys("a")
	tt.keys("/")
	tt.waitFor("the filter input", `^│/ `, `^enter keep filter`)
	tt.text("gzq1")
	tt.waitFor("the keys typed into the filter", `─ 3 Tools 9 · filter: gzq1 `, `^│/ gzq1\s+0/9`,
		`─ 1 Pending `, `─ 2 Frames `) // not zoomed, not quit, the focus kept
	tt.keys("BSpace", "BSpace", "BSpace", "BSpace")
	tt.text("ech")
	tt.waitFor("the filter edited", `─ 3 Tools 9 · filter: ech `, `^│/ ech\s+1/9`)
	tt.keys("Enter")
	tt.waitFor("the filter kept, back in the list", `─ 3 Tools 9 · filter: ech `, `^enter call`)

	// A call that stays in flight.
	tt.keys("Enter")
	tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `)
	tt.text("600000")
	tt.keys("Tab", "Tab")
	tt.waitFor("the value field", `^│› value\*\s`)
	tt.text("x")
	tt.keys("C-s")
	tt.waitFor("the call in flight", `1 calling`, `pending 1 `, `^enter call`)
	tt.keys("Escape") // in the list: clears the kept filter
	tt.waitFor("the filter cleared", `!filter: `, `^enter call`)

	// q asks; escape stays.
	tt.keys("q")
	tt.waitFor("the question", `^1 request in flight: q again quits`)
	tt.keys("Escape")
	tt.waitFor("the question gone", `!in flight: q again quits`, `^enter call`, `pending 1 `)
	// In the filter, q is a letter.
	tt.keys("/")
	tt.text("q")
	tt.waitFor("q typed into the filter", `─ 3 Tools 9 · filter: q `, `!in flight: q again quits`)
	tt.keys("Escape")
	tt.waitFor("the filter cleared again", `!filter: `, `^enter call`)
	if _, err := os.Stat(filepath.Join(tt.dir, "status")); err == nil {
		t.Fatalf("sonde exited before q, q%s", tt.diag())
	}
	tt.keys("q")
	tt.waitFor("the question again", `^1 request in flight: q again quits`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Errorf("sonde exited with status %d, want 0%s", code, tt.diag())
	}
	proctest.AssertGone(t, f.PIDFile)
}

// TestTUICopyCallLine (#33): Y in a result copies its call as a sonde
// call command line (OSC 52, kept by tmux as a paste buffer), and that line,
// run by a shell, makes the same call.
func TestTUICopyCallLine(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd(nil))
	tt.waitFor("the handshake", handshake...)
	tt.run("set", "-g", "set-clipboard", "on")
	tt.keys("3")
	tt.waitFor("the focus on Tools", `^enter call`, `^│› echo\s`)
	tt.keys("Enter")
	tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `)
	tt.keys("Tab", "Tab")
	tt.waitFor("the value field", `^│› value\*\s`)
	const value = "it's $HOME"
	tt.text(value)
	tt.keys("C-s")
	tt.waitFor("the result", `result 1/1`, `pending 0 `, `Y copy as sonde call`)
	tt.keys("Y")
	tt.waitFor("the note", `copied to the clipboard: sonde call echo`)
	buf, err := tt.exec("show-buffer")
	if err != nil {
		t.Fatalf("show-buffer: %v %s", err, buf)
	}
	want := "sonde call echo --args '{\"value\":\"it'\\''s $HOME\"}' -- " + strings.Join(f.Argv(), " ")
	if buf != want {
		t.Fatalf("tmux's buffer after Y:\n%s\nwant\n%s", buf, want)
	}
	tt.quit()

	// The line runs: sonde is this test binary acting as sonde, and the
	// server (the test binary too) needs the --env flags of ChildEnv,
	// which a copied line does not carry.
	var envFlags []string
	for _, kv := range clitest.ChildEnv() {
		envFlags = append(envFlags, "--env", shQuote(kv))
	}
	cmd := exec.Command("/bin/sh", "-c", `sonde() { sub=$1; shift; "$SONDE_BIN" "$sub" `+strings.Join(envFlags, " ")+` "$@"; }; `+buf)
	cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), "SONDE_BIN="+os.Args[0])
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), value) {
		t.Fatalf("the copied line: %v\n%s", err, out)
	}
	proctest.AssertGone(t, f.PIDFile)
}
