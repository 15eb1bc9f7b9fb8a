//go:build unix

package tap_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// runAs runs sonde (a copy of this test binary, re-executed) as uid and
// gid, with no other groups, in dir (also its HOME), and returns its exit
// status and stderr.
func runAs(t *testing.T, uid, gid int, dir string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin", "sonde")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(clitest.ChildEnv(), "HOME="+dir, "PATH="+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// TestWrapAsAnotherUser: sonde run as a user other than root, in a folder
// that user may write (mode 0777), replaces no config it could not give
// back to its owner: a root's file (mode 0644: that user may not write it)
// is refused with CONFIG_READ_ONLY, and that user's own file whose group
// is one the user is not in, with CONFIG_OWNER; neither file changes, its
// owner neither, and nothing is written beside it. Before, both were
// replaced by a file of that user's. Root only (to make the files and run
// as uid 65534).
func TestWrapAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the files belong to several users")
	}
	for _, tc := range []struct {
		name     string
		uid, gid int
		mode     os.FileMode
		want     string
	}{
		{"root's file", 0, 0, 0o644, "sonde: CONFIG_READ_ONLY: %s: you may not write the file (permission denied; mode 0644, owner uid 0, gid 0), so sonde does not replace it; nothing was written. Run sonde wrap as the user who may\n"},
		{"a group not the user's", 65534, 0, 0o664, "sonde: CONFIG_OWNER: %s: the file's group is gid 0, which sonde (uid 65534) is not in, so a new file would change the file's owner or group, and the host might no longer read it; nothing was written. Run sonde wrap as the file's owner, or with sudo\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := otherUserDir(t, "sonde-wrap-user-", 0o777)
			conf := filepath.Join(dir, "conf")
			if err := os.Mkdir(conf, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(conf, 0o777); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(conf, "servers.json")
			orig := "{\"mcpServers\": {\"a\": {\"command\": \"npx\"}}}\n"
			if err := os.WriteFile(file, []byte(orig), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(file, tc.uid, tc.gid); err != nil {
				t.Fatal(err)
			}
			code, stderr := runAs(t, 65534, 65534, dir, "wrap", "--config", file, "--all", "--sonde", fakeSonde)
			if want := fmt.Sprintf(tc.want, file); code != 2 || stderr != want {
				t.Errorf("exit %d, stderr\n%q\nwant 2 and\n%q", code, stderr, want)
			}
			if got := listDir(t, conf); len(got) != 1 || got["servers.json"] != orig {
				t.Errorf("the folder after wrap: %v", got)
			}
			if uid, gid := ownerOf(t, file); uid != tc.uid || gid != tc.gid {
				t.Errorf("owner %d:%d, want %d:%d", uid, gid, tc.uid, tc.gid)
			}
		})
	}
}
