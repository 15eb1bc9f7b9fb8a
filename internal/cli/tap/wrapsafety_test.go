package tap_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
)

// listDir is the names in dir and their contents.
func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

// TestWrapReadOnly: a config file that is read-only (mode 0444) is not
// replaced by wrap or unwrap: sonde refuses with CONFIG_READ_ONLY, says
// why and how to make it writable, and writes nothing (no backup, no
// temporary file), not even another file of the run that could be
// written. --dry-run still prints the change.
func TestWrapReadOnly(t *testing.T) {
	home, project := clitest.TempHostHome(t)
	dir := filepath.Join(project, ".vscode")
	file := filepath.Join(dir, "mcp.json")
	text := "{\"servers\": {\"a\": {\"command\": \"x\"}}}\n"
	clitest.WriteTestFile(t, file, text)
	user := filepath.Join(home, ".cursor", "mcp.json")
	clitest.WriteTestFile(t, user, "{\"mcpServers\": {\"b\": {\"command\": \"y\"}}}\n")
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	before, beforeUser := listDir(t, dir), listDir(t, filepath.Dir(user))
	fix := "chmod u+w " + file
	if runtime.GOOS == "windows" {
		fix = `attrib -R "` + file + `"`
	}
	refused := func(args ...string) {
		t.Helper()
		r := clitest.RunSonde(t, "", args...)
		clitest.CheckRun(t, r, 2, "sonde: CONFIG_READ_ONLY: "+file+": ...")
		if !strings.Contains(r.Stderr, "read-only (mode 0444)") || !strings.Contains(r.Stderr, "nothing was written") || !strings.Contains(r.Stderr, fix) {
			t.Errorf("%q: stderr %q, want the mode, that nothing was written and %q", args, r.Stderr, fix)
		}
		if !reflect.DeepEqual(listDir(t, dir), before) || !reflect.DeepEqual(listDir(t, filepath.Dir(user)), beforeUser) {
			t.Errorf("%q wrote: %v %v", args, listDir(t, dir), listDir(t, filepath.Dir(user)))
		}
	}
	refused("wrap", "--config", file, "--all", "--sonde", fakeSonde)
	refused("wrap", "--server", "a", "--sonde", fakeSonde)
	refused("wrap", "--all", "--sonde", fakeSonde) // the user's Cursor file is writable: not written either
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o444 {
		t.Errorf("mode %v", st.Mode())
	}
	if err := tap.CheckConfig(file); !errors.Is(err, &tap.ConfigError{Code: tap.CodeConfigReadOnly}) || errors.Is(err, &tap.ConfigError{Code: tap.CodeConfigWrite}) {
		t.Errorf("checkConfig: %v, want a CONFIG_READ_ONLY ConfigError", err)
	}

	// Wrapped while writable, then made read-only: unwrap refuses.
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde), 0, "")
	if err := os.Chmod(file, 0o444); err != nil {
		t.Fatal(err)
	}
	before = listDir(t, dir)
	refused("unwrap", "--config", file, "--all")
	// --dry-run writes nothing: it prints the change.
	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--config", file, "--all", "--dry-run"), 0, "")
}
