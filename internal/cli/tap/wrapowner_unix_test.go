//go:build unix

package tap_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// ownerOf is the uid and gid of path.
func ownerOf(t *testing.T, path string) (int, int) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	return int(sys.Uid), int(sys.Gid)
}

// TestWrapKeepsOwner: sudo sonde wrap (sonde as root) on a config file
// another user owns leaves the file that user's, with its group and mode,
// and gives the backup the same owner; so does unwrap, and its backup.
// Root only (CI runs as root).
func TestWrapKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can give a file to another user")
	}
	_, project := clitest.TempHostHome(t)
	file := filepath.Join(project, "servers.json")
	orig := "{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"]}}}\n"
	clitest.WriteTestFile(t, file, orig)
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(file, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	check := func(when, path string) {
		t.Helper()
		if uid, gid := ownerOf(t, path); uid != 65534 || gid != 65534 {
			t.Errorf("%s: %s is owned by %d:%d, want 65534:65534", when, filepath.Base(path), uid, gid)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Errorf("%s: %s has mode %v, want 0640", when, filepath.Base(path), st.Mode())
		}
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde), 0, "")
	check("after wrap", file)
	check("after wrap", file+".sonde-backup")
	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--config", file, "--all"), 0, "")
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Errorf("after unwrap:\n%s", b)
	}
	check("after unwrap", file)
	more, _ := filepath.Glob(file + ".sonde-backup-*")
	if len(more) != 1 {
		t.Fatalf("unwrap's backups: %v", more)
	}
	check("after unwrap", more[0])
}
