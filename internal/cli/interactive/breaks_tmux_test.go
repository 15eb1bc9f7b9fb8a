package interactive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUIBreakEditForward holds the server's answer to initialize
// (--break): the Held dialog opens by itself with the frame's countdown;
// enter opens it in the JSON editor, a malformed edit is refused with the
// byte offset while the frame stays held, and the repaired edit is
// forwarded: the handshake then completes. At 80x24 and 120x36.
func TestTUIBreakEditForward(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := clitest.NewFixture(t)
			tt := startTUI(t, size[0], size[1], f.Cmd([]string{"--break", "dir:in method:initialize", "--break-timeout", "60s"}))
			tt.waitFor("the held answer with its countdown",
				`held frames · 1`, `› h1\s+<-\s+response\s+1\s+(59|60)s\s+initialize`, `⏸ 1 held · H`, `pending 1 `)
			tt.keys("Enter")
			tt.waitFor("the editor", `edit h1 · ctrl\+s forwards it edited`, `"jsonrpc": "2.0",`)
			tt.text("x")
			tt.keys("C-s")
			tt.waitFor("the refusal, with the offset", `refused at byte 1 \(line 1\)`, `x\{`, `edit h1 `, `⏸ 1 held · H`, "!sonde-fixture 0\\.1\\.0")
			tt.keys("BSpace")
			tt.keys("C-s")
			s := tt.waitFor("the handshake, once forwarded", append([]string{"!held frames", "!⏸"}, handshake...)...)
			tt.quit()
			checkPIDs(t, f, s, 1)
		})
	}
}

// TestTUIBreakExternalEditor edits a held answer with $EDITOR (here a sed
// that renames the server): what it left opens in the JSON editor, and
// ctrl+s forwards it: the client sees the edited name.
func TestTUIBreakExternalEditor(t *testing.T) {
	t.Setenv("VISUAL", "sed -i s/sonde-fixture/edited-fixture/")
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 36, f.Cmd([]string{"--break", "dir:in method:initialize", "--break-timeout", "0"}))
	tt.waitFor("the held answer, held until told", `› h1\s+<-\s+response\s+1\s+held\s+initialize`)
	tt.keys("e")
	tt.waitFor("the editor with the edit", `edit h1 `, `"name": "edited-fixture"`)
	tt.keys("C-s")
	tt.waitFor("the edited handshake", `edited-fixture 0\.1\.0`, `─ 3 Tools 9 `, "!⏸")
	tt.quit()
}

// TestTUIBreakCloseReleases holds sonde's answer to the server's ping
// (fault server-ping, --break 'dir:out method:ping', held until told);
// closing the UI lets it go: the server receives it, as its stderr says.
func TestTUIBreakCloseReleases(t *testing.T) {
	f := clitest.NewFixture(t)
	log := filepath.Join(t.TempDir(), "fixture.stderr")
	rec := filepath.Join(t.TempDir(), "session.jsonl")
	args := []string{"--break", "dir:out method:ping", "--break-timeout", "0", "--record", rec}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	words := []string{}
	for _, a := range f.Argv("--fault", "server-ping") {
		words = append(words, shQuote(a))
	}
	args = append(args, "--", "/bin/sh", "-c", "exec "+strings.Join(words, " ")+" 2>"+shQuote(log))
	tt := startTUI(t, 80, 24, args)
	tt.waitFor("sonde's answer held", `⏸ 1 held · H`)
	if b, _ := os.ReadFile(log); strings.Contains(string(b), `response id="srv-1"`) {
		t.Fatalf("the server got the held answer already: %s", b)
	}
	tt.keys("C-c")
	if code := tt.waitExit(); code != 0 && code != 130 {
		t.Fatalf("exit status %d\n%s", code, tt.diag())
	}
	deadline := time.Now().Add(tuiWait)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), `response id="srv-1" result={}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never got the answer held when the UI closed; its stderr:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.AssertStarted(1)
	// The recording keeps both steps of the held answer: held, then
	// released when the UI (its watcher) went away.
	steps := holdSteps(t, rec)
	if len(steps) != 2 || steps[0].Action != client.HoldHeld || steps[1].Action != client.HoldReleased || steps[1].By != client.HoldByDetach {
		t.Fatalf("hold records %+v, want held then released by detach", steps)
	}
}

// holdSteps reads the hold records of a capture.
func holdSteps(t *testing.T, path string) []capture.HoldRec {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := capture.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.HoldRec
	for rec, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Hold != nil {
			out = append(out, *rec.Hold)
		}
	}
	return out
}
