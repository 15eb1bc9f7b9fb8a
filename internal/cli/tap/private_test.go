//go:build unix

package tap_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// umaskTap starts sonde tap (label priv, recording in home's sessions
// folder) in front of the fixture under umask 000, past the host's
// initialize.
func umaskTap(t *testing.T, home string) *host {
	t.Helper()
	fx := clitest.NewFixture(t)
	argv := append([]string{"/bin/sh", "-c", `umask 000; exec "$0" "$@"`, os.Args[0], "tap", "--label", "priv", "--"}, fx.Argv()...)
	h := startHost(t, []string{"SONDE_HOME=" + home}, argv...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	return h
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestSocketPrivateUnderUmask000: under umask 000, the sessions folder
// the tap makes is 0700 and the session's socket 0600, and sonde inject
// goes through it.
func TestSocketPrivateUnderUmask000(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := umaskTap(t, home)
	h.write(initialized)
	socks, _ := filepath.Glob(filepath.Join(home, "sessions", "priv-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets %v\n%s", socks, h.stderr())
	}
	if p := perm(t, filepath.Join(home, "sessions")); p != 0o700 {
		t.Errorf("sessions folder mode %04o, want 0700", p)
	}
	if p := perm(t, socks[0]); p != 0o600 {
		t.Errorf("socket mode %04o, want 0600", p)
	}
	recs, _ := filepath.Glob(filepath.Join(home, "sessions", "priv-*.jsonl"))
	if len(recs) != 1 || perm(t, recs[0]) != 0o600 {
		t.Errorf("recording %v not 0600", recs)
	}
	r := clitest.RunSonde(t, "", "inject", "ping")
	clitest.CheckRun(t, r, 0, "")
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
}

// TestSessionsFolderLooseRefused: a sessions folder the user made 0777
// (umask 000) is not used: the tap forwards all the same, says why on
// stderr with the code and the command to run, and makes neither a
// recording nor a socket there; the folder is left as it was.
func TestSessionsFolderLooseRefused(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	h := umaskTap(t, home)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	errText := h.stderr()
	for _, want := range []string{"sonde tap: not recording", "MCP_NOT_PRIVATE", "is open to other users (mode 0777)", "chmod 700 " + dir} {
		if !strings.Contains(errText, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errText)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the tap wrote in a folder open to others: %v", ents)
	}
	if p := perm(t, dir); p != 0o777 {
		t.Errorf("the user's folder was changed to %04o", p)
	}
}

// TestSessionsFolderOtherOwnerRefused: a sessions folder of another
// user's (0700 all the same) is not used. Root only (to chown).
func TestSessionsFolderOtherOwnerRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a folder to another user")
	}
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	h := umaskTap(t, home)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	if !strings.Contains(h.stderr(), "MCP_NOT_PRIVATE") || !strings.Contains(h.stderr(), "belongs to uid 65534, not to you (uid 0)") {
		t.Errorf("stderr:\n%s", h.stderr())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the tap wrote in another user's folder: %v", ents)
	}
}

// TestInjectRefusesLooseFolder: sonde inject does not talk to a socket in
// a sessions folder others may write (it became 0777 after the tap
// started): exit 2, MCP_NOT_PRIVATE, the command to run.
func TestInjectRefusesLooseFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := liveTap(t, home, "loose")
	h.write(initialized)
	dir := filepath.Join(home, "sessions")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	r := clitest.RunSonde(t, "", "inject", "ping")
	if r.Code != 2 || !strings.Contains(r.Stderr, "MCP_NOT_PRIVATE") || !strings.Contains(r.Stderr, "chmod 700 "+dir) {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
	os.Chmod(dir, 0o700)
	h.stdin.Close()
	h.wait()
}

// TestSocketRefusesOtherUser: a connection to a session's socket from a
// process of another user is closed unanswered, and said once on the
// tap's stderr, even when the socket and its folder let it in (here the
// test opens them up); the user's own connection is answered. Root only
// (to run the client as nobody).
func TestSocketRefusesOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	dir := otherUserDir(t, "sonde-peer-", 0o755)
	// The test binary, where nobody may run it.
	bin := filepath.Join(dir, "client")
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	var errw proctest.Buffer
	stop := tap.ServeControl(sock, &errw)
	if stop == nil {
		t.Fatalf("no socket: %s", errw.String())
	}
	defer stop()
	if p := perm(t, sock); p != 0o600 {
		t.Errorf("socket mode %04o, want 0600", p)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	run := func(cred *syscall.Credential) string {
		cmd := exec.Command(bin, dialArg, sock)
		cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("client: %v\n%s", err, out.String())
		}
		return out.String()
	}
	if got := run(nil); !strings.Contains(got, `"code":-32090`) {
		t.Fatalf("the user's own connection: %q", got)
	}
	if got := run(&syscall.Credential{Uid: 65534, Gid: 65534}); !strings.HasPrefix(got, "closed") {
		t.Errorf("another user's connection was answered: %q", got)
	}
	stop()
	if !strings.Contains(errw.String(), "MCP_NOT_PRIVATE") || !strings.Contains(errw.String(), "runs as uid 65534, not as uid 0") {
		t.Errorf("the tap's stderr: %q", errw.String())
	}
}

// otherUserDir makes a folder of mode mode that another user can reach: it
// is not under the test's own temporary folder, whose parents only this
// user may enter. It is removed when the test ends.
func otherUserDir(t *testing.T, prefix string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}
