package capfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestCommandsTakeSessionIDs: every command that reads a capture takes a
// session id of $SONDE_HOME/sessions (or the start of one) as sonde replay
// does, not only a file (#33: lint, stats and diff said the file was
// missing).
func TestCommandsTakeSessionIDs(t *testing.T) {
	good := recordCall(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	t.Chdir(t.TempDir())
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const id = "fx-20261201-143007-4242"
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"lint", id},
		{"stats", "fx-2026"},
		{"diff", id, "fx-20261201"},
		{"timeouts", id},
		{"export", "--format", "text", id},
	} {
		r := clitest.RunSonde(t, "", args...)
		if r.Code != 0 || strings.Contains(r.Stderr, "no such file") {
			t.Errorf("sonde %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	if r := clitest.RunSonde(t, "", "stats", "zz-nothing"); r.Code != 2 {
		t.Errorf("a name that is neither file nor session: exit %d %s", r.Code, r.Stderr)
	}
}
