package capfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestReplayAgainstCapabilitiesAndCancels: a session recorded with roots
// and elicitation declared, and a call its user cancelled, is re-driven
// with the same client capabilities (no flags) and the call cancelled at
// its recorded offset: every request is equal, and the re-drive's own
// recording shows the capabilities and the cancel.
func TestReplayAgainstCapabilitiesAndCancels(t *testing.T) {
	root := t.TempDir()
	script := `{"method":"tools/call","params":{"name":"echo","arguments":{"value":"never","delay_ms":20000}},"cancel_after_ms":400}
{"method":"tools/call","params":{"name":"echo","arguments":{"value":"after"}},"delay_ms":800}
`
	orig, rec := record(t, script, []string{"script", "-", "--root", root, "--elicit-defaults"})
	if !strings.Contains(rec.Stdout+rec.Stderr, "MCP_ABORTED") {
		t.Fatalf("the recorded call was not cancelled:\n%s%s", rec.Stdout, rec.Stderr)
	}
	again := filepath.Join(t.TempDir(), "again.jsonl")
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"replay", "--against", orig, "--record", again})...)
	if r.Code != cmdutil.ExitOK || !strings.Contains(r.Stdout, "2 requests: 2 equal, 0 different") {
		t.Fatalf("re-drive:\n%s%s", r.Stdout, r.Stderr)
	}
	b, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{`\"roots\":{\"listChanged\":true}`, `\"elicitation\":`, `notifications/cancelled`} {
		if !strings.Contains(text, want) {
			t.Errorf("the re-drive's capture lacks %s", want)
		}
	}
}
