package interactive_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUIFramesFindsAndPreviewsACall calls echo (1.2s) from the Tools pane
// in a 120x40 terminal, then in Frames: the preview column reads the
// call's arguments and the result's text (not `{"jsonr…`), and tool:echo,
// the plain word of its value and duration:>1s each find the call's
// request and response (issue #33: a frame is judged by its request).
func TestTUIFramesFindsAndPreviewsACall(t *testing.T) {
	f := clitest.NewFixture(t)
	// sonde's working directory, where w saves: not the source tree.
	work := t.TempDir()
	t.Chdir(work)
	tt := startTUI(t, 120, 40, f.Cmd(nil))
	tt.waitFor("the handshake", append([]string{`^instructions: sonde-fixture is a fault-injecting`}, handshake...)...)

	tt.keys("3")
	tt.waitFor("the focus on Tools", `^enter call`, `^│› echo\s`)
	tt.keys("Enter")
	tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `)
	tt.text("1200")
	tt.keys("Tab", "Tab")
	tt.waitFor("the value field", `^│› value\*\s`)
	const value = "framesword"
	tt.text(value)
	tt.waitFor("the value typed", `^│› value\*\s+`+value+`\s`)
	tt.keys("C-s")
	s := tt.waitFor("the call", `->\s+\d+\s+(?:tools/)?call\s`)
	id := submatch(t, s, `->\s+(\d+)\s+(?:tools/)?call\s`)
	tt.waitFor("the result", `<- `+id+`\s+response\s+resolved`, `pending 0 `, `result 1/1`)

	// The result view opens when the result comes (it may be drawn after
	// pending 0 under load): esc goes back from it to the tool list.
	tt.keys("Escape")
	tt.waitFor("the tool list", `^│› echo\s`, `!result 1/1`)
	tt.keys("2")
	tt.waitFor("the focus on Frames", `^enter open frame`)
	tt.keys("z")
	tt.waitFor("Frames zoomed", `^╭─ 2 Frames `, `!─ 1 Pending `)
	// The preview: the call's arguments, the result's text.
	tt.waitFor("the previews",
		`-> `+id+`\s+tools/call echo\s+sent\s.*\d+B \{"delay_ms":1200,.*"value":"`+value+`"`,
		`<- `+id+`\s+response\s+resolved id `+id+` after \S+\s+\d+B .*`+value,
		`!\{"jsonr`)

	for _, q := range []string{"tool:echo", value, "duration:>1s"} {
		tt.keys("/")
		tt.text(q)
		tt.keys("Enter")
		tt.waitFor("the call's frames for "+q, `─ 2 Frames \d+ · .*`+q,
			`-> `+id+`\s+tools/call echo\s`, `<- `+id+`\s+response\s`, ` 2 of \d+ · esc clears│`,
			`!-> 1\s+initialize`)
		tt.keys("Escape")
		tt.waitFor("the filter cleared", `-> 1\s+initialize`)
	}
	// y: the selected frame (the call's response) on the clipboard, which
	// tmux keeps as a paste buffer; w: in a file of the working directory.
	tt.run("set", "-g", "set-clipboard", "on")
	tt.waitFor("the response selected", `│>\s*\S+ <- `+id+`\s+response\s`)
	tt.keys("y")
	s = tt.waitFor("the copy", `copied frame (\d+) \(\d+B\) to the clipboard`)
	seq := submatch(t, s, `copied frame (\d+) \(`)
	if buf, err := tt.exec("show-buffer"); err != nil || !strings.Contains(buf, `"id":`+id+`,"result"`) || !strings.Contains(buf, value) {
		t.Errorf("tmux's buffer after y: %q (%v), want the response's JSON", buf, err)
	}
	tt.keys("w")
	want := filepath.Join(work, "sonde-frame-"+seq+".json")
	tt.waitFor("the save", `saved to `+regexp.QuoteMeta(filepath.Base(want)))
	if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), value) {
		t.Errorf("the saved frame: %q (%v)", b, err)
	}
	tt.keys("z")
	s = tt.waitFor("Frames unzoomed", `─ 1 Pending `, `─ 4 stderr `)
	tt.quit()
	checkPIDs(t, f, s, 1)
}
