//go:build linux

package doctor_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
	"github.com/sonde-mcp/sonde/transport"
)

// TestDoctorSweepsHiddenDaemon: a server that starts a daemon which left
// its process group (setsid), cleared its environment (no MarkEnv) and
// closed the server's pipes leaves nothing by which the sweep of the
// group, the mark and the pipes finds it; the server's cgroup does. After
// doctor exits, the daemon is gone, and doctor names it at shutdown. It
// skips where sonde cannot make a cgroup (no cgroup v2 delegated to this
// user): there such a daemon survives (docs/commands.md).
func TestDoctorSweepsHiddenDaemon(t *testing.T) {
	if !transport.CgroupsAvailable() {
		t.Skip("no cgroup v2 folder sonde may create cgroups in")
	}
	fx := clitest.NewFixture(t)
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	// The daemon writes its pid, then sleeps; the server waits for the pid
	// before it becomes the fixture.
	script := `env -i setsid sh -c 'echo $$ > "$0"; exec sleep 120' "$1" </dev/null >/dev/null 2>&1 &
while [ ! -s "$1" ]; do sleep 0.01; done
shift; exec "$@"`
	argv := append([]string{"sh", "-c", script, "sh", pidFile}, fx.Argv()...)
	path := writeConfig(t, map[string]any{"hides": entry(argv, clitest.ChildEnv())})
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--timeout", "20s")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the daemon wrote no pid: %v\n%s", err, r.Stdout)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	clitest.WriteTestFile(t, pidFile+".list", strconv.Itoa(pid)+"\n")
	proctest.AssertGone(t, pidFile+".list")
	res := decode(t, r.Stdout)["hides"]
	if res.Failed != "shutdown" || !strings.Contains(res.Steps[len(res.Steps)-1].Detail, "pid "+strconv.Itoa(pid)) {
		t.Errorf("doctor does not name the daemon %d at shutdown: %+v", pid, res)
	}
}
