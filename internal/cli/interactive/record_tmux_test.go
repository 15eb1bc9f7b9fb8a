package interactive_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUIRecord runs the interactive UI with --record in a real terminal:
// the status bar shows the recording, a restart is recorded in the same
// file, and on quit sonde says where the capture went.
func TestTUIRecord(t *testing.T) {
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "tui.jsonl")
	tt := startTUI(t, 120, 40, f.Cmd([]string{"--record", path}))
	tt.waitFor("the handshake, recording", append([]string{`^sonde │ ● REC tui\.jsonl │ sonde-fixture`}, handshake...)...)
	tt.keys("C-r")
	s := tt.waitFor("the restart", `(?s)── pid \d+ started: .*── pid \d+ started: `, `● REC tui\.jsonl`)
	if pids := startedPIDs(s); len(pids) == 2 {
		// The second server's handshake is done once the status bar names
		// the server with the new pid.
		s = tt.waitFor("the second handshake", `sonde-fixture 0\.1\.0 │ .*stdio pid `+strconv.Itoa(pids[1])+` │`)
	}
	tt.leave()
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("sonde exited with status %d%s", code, tt.diag())
	}
	stderr, _ := os.ReadFile(filepath.Join(tt.dir, "stderr"))
	if !strings.HasPrefix(string(stderr), "sonde: capture "+path+": ") || strings.Count(string(stderr), "\n") != 1 {
		t.Errorf("stderr %q, want the capture's summary", stderr)
	}
	_, recs := capturetest.Records(t, path)
	var starts, restarts, sessions int
	for _, r := range recs {
		switch {
		case r.Type == capture.TypeProcess && r.What == "start":
			starts++
		case r.Type == capture.TypeRestart:
			restarts++
		case r.Type == capture.TypeSession:
			sessions++
		}
	}
	if starts != 2 || restarts != 1 || sessions != 2 {
		t.Errorf("capture has %d starts, %d restarts, %d sessions; want 2, 1, 2", starts, restarts, sessions)
	}
	checkPIDs(t, f, s, 2)
}
