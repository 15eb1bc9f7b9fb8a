package transport

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestStdioDaemonLeftBehind: a server whose child leaves the process group
// and the session (setsid), holding stdout, is still stopped with the
// server on Linux, found by its mark and its pipe.
func TestStdioDaemonLeftBehind(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	s, _ := startRole(t, "fixture", nil, "--fault", "daemon-holds-stdout", "--pid-file", pidFile)
	awaitStartup(t, s)
	pids := proctest.ReadPIDs(t, pidFile)
	if len(pids) != 2 {
		t.Fatalf("pid file %v, want the fixture's pid then the daemon's", pids)
	}
	if sid, err := unix.Getsid(pids[1]); err != nil || sid != pids[1] {
		t.Fatalf("daemon %d did not start its own session (sid %d, %v)", pids[1], sid, err)
	}
	xe := closeWhileReading(t, s)
	if left := xe.Exit.Left; len(left) != 1 || left[0].Pid != pids[1] || left[0].Name == "" {
		t.Errorf("left behind %+v, want the daemon %d, named", left, pids[1])
	}
	proctest.AssertGone(t, pidFile)
}
