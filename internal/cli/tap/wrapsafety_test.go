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

// TestWrapSymlink: a config that is a symlink (to a dotfiles folder, say)
// stays one: wrap and unwrap replace the file it points to, with its mode,
// by a new file renamed over it (another file afterwards: never written in
// place, so a host reads the old bytes or the new), the link is left as it was, the backups go beside the link, and nothing
// else is written in either folder.
func TestWrapSymlink(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	dots := t.TempDir()
	target := filepath.Join(dots, "mcp.json")
	orig := "{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"srv\"]}}}\n"
	if err := os.WriteFile(target, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(project, "servers.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	check := func(when string, wantBackups int) {
		t.Helper()
		if to, err := os.Readlink(link); err != nil || to != target {
			t.Errorf("%s: the link reads %q (%v), want %q", when, to, err, target)
		}
		if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
			t.Errorf("%s: the target's mode is %v", when, st.Mode())
		}
		if got := listDir(t, dots); len(got) != 1 {
			t.Errorf("%s: the target's folder holds %v", when, got)
		}
		backups, _ := filepath.Glob(link + ".sonde-backup*")
		if ents, _ := os.ReadDir(project); len(backups) != wantBackups || len(ents) != 1+wantBackups {
			t.Errorf("%s: backups %v, the link's folder holds %d files", when, backups, len(ents))
		}
	}
	first, _ := os.Stat(target)
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", link, "--all", "--sonde", fakeSonde), 0, "")
	if now, _ := os.Stat(target); os.SameFile(first, now) {
		t.Error("the target was written in place, not replaced by a new file at once")
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), fakeSonde) {
		t.Errorf("the target was not wrapped:\n%s", b)
	}
	if b, _ := os.ReadFile(link + ".sonde-backup"); string(b) != orig {
		t.Errorf("backup %q", b)
	}
	check("after wrap", 1)
	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--config", link, "--all"), 0, "")
	if b, _ := os.ReadFile(target); string(b) != orig {
		t.Errorf("after unwrap:\n%s", b)
	}
	check("after unwrap", 2)
}
