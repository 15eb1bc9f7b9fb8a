//go:build linux || darwin

package client

import (
	"syscall"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestSnapshotStopped: a server stopped with SIGSTOP is "stopped".
func TestSnapshotStopped(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{faults: []string{"never-respond"}})
	s.init()
	pid := proctest.ReadPIDs(t, s.pidFile)[0]
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	var snap *Snapshot
	// The state may take a moment to show.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if snap = timeoutSnapshot(t, s, echoX, 500*time.Millisecond); snap.Kind == SnapStopped {
			break
		}
	}
	if snap.Kind != SnapStopped {
		t.Fatalf("kind %s", snap.Kind)
	}
}
