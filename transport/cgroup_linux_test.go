package transport

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestCgroupHiddenDaemon: a program that starts a daemon which left its
// group (setsid), cleared its environment and closed the program's pipes,
// then exits: Wait finds the daemon in the program's cgroup, kills it and
// names it in Left, and the cgroup is removed. Skipped where sonde may
// not create cgroups.
func TestCgroupHiddenDaemon(t *testing.T) {
	if !CgroupsAvailable() {
		t.Skip("no cgroup v2 folder sonde may create cgroups in")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "daemon.pid")
	script := `env -i setsid sh -c 'echo $$ > "$0"; exec sleep 120' "$1" </dev/null >/dev/null 2>&1 &
while [ ! -s "$1" ]; do sleep 0.01; done`
	p, err := StartProcess(ProcessConfig{Argv: []string{"sh", "-c", script, "sh", pidFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stdout.Close()
	defer p.Stderr.Close()
	p.Stdin.Close()
	if p.cg == nil {
		t.Fatal("the program was not started in a cgroup")
	}
	cgDir := p.cg.dir
	ended := p.Wait()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the daemon wrote no pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := os.WriteFile(pidFile+".list", []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proctest.AssertGone(t, pidFile+".list")
	if len(ended.Left) != 1 || ended.Left[0].Pid != pid {
		t.Errorf("Left %+v, want the daemon %d", ended.Left, pid)
	}
	if _, err := os.Stat(cgDir); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s is still there: %v", cgDir, err)
	}
}

// TestCgroupStale: the empty cgroup a killed sonde left (its pid no
// longer runs) is removed when the next server's cgroup is made; one of a
// running sonde is kept.
func TestCgroupStale(t *testing.T) {
	if !CgroupsAvailable() {
		t.Skip("no cgroup v2 folder sonde may create cgroups in")
	}
	parent := ownCgroupDir()
	// A pid that no longer runs: a child started and reaped.
	p, err := StartProcess(ProcessConfig{Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin.Close()
	p.Wait()
	p.Stdout.Close()
	p.Stderr.Close()
	stale := filepath.Join(parent, "sonde-"+strconv.Itoa(p.Pid())+"-stale")
	live := filepath.Join(parent, "sonde-"+strconv.Itoa(os.Getpid())+"-live")
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(stale); os.Remove(live) })
	c := newCgroup(newMark())
	if c == nil {
		t.Fatal("no cgroup")
	}
	c.remove()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale cgroup is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live sonde's cgroup was removed: %v", err)
	}
}
