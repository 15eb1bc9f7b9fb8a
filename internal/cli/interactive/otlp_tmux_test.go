package interactive_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/otlptest"
)

// TestTUIOTLP runs the interactive UI with --otlp-endpoint in a real
// terminal: the spans of the session and of a restarted one reach the
// collector, and nothing is written on stderr (the terminal stays the
// UI's).
func TestTUIOTLP(t *testing.T) {
	col := otlptest.Start(t)
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd([]string{"--otlp-endpoint", col.URL}))
	tt.waitFor("the handshake", handshake...)
	tt.keys("C-r")
	s := tt.waitFor("the restart", `(?s)── pid \d+ started: .*── pid \d+ started: `)
	if pids := startedPIDs(s); len(pids) == 2 {
		s = tt.waitFor("the second handshake", `sonde-fixture 0\.1\.0 │ .*stdio pid `+strconv.Itoa(pids[1])+` │`)
	}
	// q with a request in flight asks first: wait until the second
	// session's tools/list is answered (its span reached the collector;
	// spans leave as they end), for up to 15s.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		lists := 0
		for _, sp := range col.Spans() {
			if sp.Name == "tools/list" {
				lists++
			}
		}
		if lists >= 2 {
			break
		}
	}
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("sonde exited with status %d%s", code, tt.diag())
	}
	if stderr, _ := os.ReadFile(filepath.Join(tt.dir, "stderr")); len(stderr) != 0 {
		t.Errorf("stderr %q", stderr)
	}
	var inits, lists int
	for _, sp := range col.Spans() {
		switch sp.Name {
		case "initialize":
			inits++
		case "tools/list":
			lists++
		}
	}
	if inits != 2 || lists < 2 {
		t.Errorf("%d initialize and %d tools/list spans, want 2 and 2 or more", inits, lists)
	}
	checkPIDs(t, f, s, 2)
}
